package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// shown is s as padrun shows it to people: bytes that are not UTF-8 as
// \xNN, and control and other invisible characters (newline, escape, bidi
// overrides) as Go escapes (\n, \x1b, \u202e), so that a name or agent
// string can neither split a message nor reach the terminal raw. Other
// text is unchanged, and shown(shown(s)) == shown(s).
func shown(s string) string {
	if visible(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unicode.IsGraphic(r):
			b.WriteString(s[i : i+n])
		default:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		}
		i += n
	}
	return b.String()
}

// visible reports whether shown leaves s as it is.
func visible(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsGraphic(r) {
			return false // not UTF-8, or a U+FFFD of its own, which shown keeps
		}
	}
	return true
}

// shownWriter writes each message through shown: every Write is one
// message, whose one final newline is kept. padrun's stderr goes through
// it, so that no message of padrun's, from any package, can split or
// reach the terminal raw. Fd keeps it known as the terminal it writes to.
type shownWriter struct {
	w  io.Writer
	fd interface{ Fd() uintptr }
}

func newShownWriter(w io.Writer) *shownWriter {
	s := &shownWriter{w: w}
	s.fd, _ = w.(interface{ Fd() uintptr })
	return s
}

func (s *shownWriter) Write(p []byte) (int, error) {
	msg, nl := strings.CutSuffix(string(p), "\n")
	if visible(msg) {
		return s.w.Write(p)
	}
	out := shown(msg)
	if nl {
		out += "\n"
	}
	if _, err := io.WriteString(s.w, out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Fd is the descriptor written to, or ^uintptr(0) when it is no file.
func (s *shownWriter) Fd() uintptr {
	if s.fd == nil {
		return ^uintptr(0)
	}
	return s.fd.Fd()
}
