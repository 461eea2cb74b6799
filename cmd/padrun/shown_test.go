package main

import (
	"strings"
	"testing"
)

// Names are shown escaped: what would split a message or reach the
// terminal raw is escaped, other text is left as it is, and escaping twice
// changes nothing.
func TestShown_EscapesWhatIsNotVisible(t *testing.T) {
	for in, want := range map[string]string{
		"/w/s.jsonl":            "/w/s.jsonl",
		"wren lächelt 日本":       "wren lächelt 日本",
		"new\nline":             `new\nline`,
		"tab\there\r":           `tab\there\r`,
		"evil\x1b[31mred":       `evil\x1b[31mred`,
		"not\xffutf8":           `not\xffutf8`,
		"bidi\u202eoverride":    `bidi\u202eoverride`,
		"line\u2028separator":   `line\u2028separator`,
		"C:\\Users\\wren":       "C:\\Users\\wren",
		"replacement \ufffd ok": "replacement \ufffd ok",
	} {
		got := shown(in)
		if got != want {
			t.Errorf("shown(%q) = %q, want %q", in, got, want)
		}
		if again := shown(got); again != got {
			t.Errorf("shown(shown(%q)) = %q, want %q", in, again, got)
		}
	}
}

// The writer in front of stderr keeps each message's final newline and
// escapes every other.
func TestShownWriter_OneLinePerMessage(t *testing.T) {
	var b strings.Builder
	w := newShownWriter(&b)
	w.Write([]byte("padrun: refused: /w/new\nline.jsonl\n"))
	w.Write([]byte("padrun: plain\n"))
	if got, want := b.String(), "padrun: refused: /w/new\\nline.jsonl\npadrun: plain\n"; got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
}
