package ident

import (
	"testing"
)

func TestToken_AcceptsStringOrNumber(t *testing.T) {
	for in, want := range map[string]string{`"123"`: "123", `123`: "123", `"abc"`: "abc"} {
		var tok Token
		if err := tok.UnmarshalJSON([]byte(in)); err != nil || string(tok) != want {
			t.Errorf("%s: got %q, %v", in, tok, err)
		}
	}
}

func TestNormalizeID(t *testing.T) {
	const want = "34b40071a2c94c1e9f3b0d5e6f7a8b9c"
	for _, in := range []string{
		want,
		"34b40071-a2c9-4c1e-9f3b-0d5e6f7a8b9c",
		"34b40071-a2c9-4c1e-9f3b-0d5e6f7a8b9c\n",
		"34B40071-A2C9-4C1E-9F3B-0D5E6F7A8B9C",
		" \t34B40071A2C94C1E9F3B0D5E6F7A8B9C\r\n",
	} {
		if got := NormalizeID(in); got != want {
			t.Errorf("NormalizeID(%q) = %q, want %q", in, got, want)
		}
	}
	if NormalizeID("") != "" || NormalizeID(" \n") != "" {
		t.Error("an empty id must stay empty: it names no boot")
	}
}

func TestOtherNamespace_EitherDiffers_LeftOutIsSame(t *testing.T) {
	for _, tt := range []struct{ pid, tm, want string }{
		{"1", "2", ""}, {"", "", ""}, {"1", "", ""}, {"", "2", ""},
		{"9", "2", "another pid namespace (9)"}, {"1", "9", "another time namespace (9)"},
	} {
		if got := OtherNamespace(tt.pid, tt.tm, "1", "2"); got != tt.want {
			t.Errorf("OtherNamespace(%q, %q, 1, 2) = %q, want %q", tt.pid, tt.tm, got, tt.want)
		}
	}
	if got := OtherNamespace("9", "9", "", ""); got != "" {
		t.Errorf("with the reader's left out = %q, want \"\"", got)
	}
}

// Names names the first few pids and counts the rest: wrapper and marker
// word their lists of processes with it.
func TestNames_FirstFewThenHowManyMore(t *testing.T) {
	dead := []int{1 << 30, 1<<30 + 1, 1<<30 + 2, 1<<30 + 3}
	if got, want := Names(dead, 3), "pid 1073741824, pid 1073741825, pid 1073741826, and 1 more"; got != want {
		t.Errorf("Names = %q, want %q", got, want)
	}
	if got, want := Names(dead[:2], 3), "pid 1073741824, pid 1073741825"; got != want {
		t.Errorf("Names = %q, want %q", got, want)
	}
}
