//go:build linux

package main

import (
	"os/exec"
	"testing"
)

// TestPasteQuote_RoundTrip pastes each quoted word into bash and reads back
// the word bash made of it: every byte survives, control characters,
// invisible characters, quotes and bytes that are not UTF-8 included.
func TestPasteQuote_RoundTrip(t *testing.T) {
	requireTool(t, "bash")
	for _, s := range []string{
		"plain", "with space", "it's", `back\slash`, "two\nlines", "tab\there", "esc\x1b[31mred",
		"bidi\u202eevil", "bad\xffutf8", "quote' and \\ and \n", "é ü 😀", "\x7f", "x\x01y'z",
	} {
		q := pasteQuote(s)
		out, err := exec.Command("bash", "-c", "printf %s "+q).Output()
		if err != nil {
			t.Fatalf("bash -c 'printf %%s %s': %v", q, err)
		}
		if string(out) != s {
			t.Errorf("pasteQuote(%q) = %s: bash read it as %q", s, q, out)
		}
		if !visible(q) {
			t.Errorf("pasteQuote(%q) = %q has characters a message would escape", s, q)
		}
	}
}
