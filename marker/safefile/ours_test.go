package safefile

import "testing"

// A file is ours by the bytes last written there, or else by what its
// parse says; never by an empty record of what was written.
func TestOurs_ByBytesOrByParse(t *testing.T) {
	yes := func([]byte) bool { return true }
	no := func([]byte) bool { return false }
	for _, tc := range []struct {
		b, written []byte
		parsed     func([]byte) bool
		want       bool
	}{
		{[]byte("a"), []byte("a"), no, true},
		{[]byte("a"), []byte("b"), yes, true},
		{[]byte("a"), []byte("b"), no, false},
		{[]byte(""), nil, no, false},
		{[]byte("a"), nil, yes, true},
	} {
		if got := Ours(tc.b, tc.written, tc.parsed); got != tc.want {
			t.Errorf("Ours(%q, %q) = %v, want %v", tc.b, tc.written, got, tc.want)
		}
	}
}
