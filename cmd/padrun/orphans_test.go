//go:build linux

package main

import (
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// pidvar VAR FILE:KEY sets VAR to the pid recorded in a ready file.
func cmdPidvar(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: pidvar VAR FILE:KEY")
	}
	ts.Setenv(args[0], strconv.Itoa(readyPid(ts, args[1])))
}

// nointerleave FILE checks that the lines of a session file, whose second
// field is the session that wrote them (its PAD_SESSION_PID), never
// interleave: once another session has written, an earlier one never
// writes again.
func cmdNointerleave(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: nointerleave FILE")
	}
	if err := noInterleave(ts.ReadFile(args[0])); err != nil {
		ts.Fatalf("%s: %v", args[0], err)
	}
}

// noInterleave checks that each session's lines are one contiguous run.
func noInterleave(text string) error {
	done := map[string]bool{}
	cur := ""
	for i, line := range strings.Split(strings.TrimSpace(text), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			return &lineError{i + 1, line, "has no session field"}
		}
		if f[1] == cur {
			continue
		}
		if done[f[1]] {
			return &lineError{i + 1, line, "session " + f[1] + " writes again after session " + cur + " wrote"}
		}
		if cur != "" {
			done[cur] = true
		}
		cur = f[1]
	}
	return nil
}

type lineError struct {
	n    int
	line string
	why  string
}

func (e *lineError) Error() string {
	return "line " + strconv.Itoa(e.n) + " " + strconv.Quote(e.line) + ": " + e.why
}
