package jsonenc

import (
	"encoding/json"
	"testing"
)

func FuzzString(f *testing.F) {
	for _, s := range []string{"", "plain", `"\`, "<a&b>", "\b\f\n\r\t\x00\x1f\x7f", "\u2028\u2029", "\xff\xfe", "é😀", "a\xe2\x80", "\xed\xa0\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := String(nil, s); string(got) != string(want) {
			t.Fatalf("String(%q) = %s, json.Marshal: %s", s, got, want)
		}
	})
}
