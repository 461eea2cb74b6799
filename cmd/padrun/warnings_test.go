//go:build linux

package main

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/rs/zerolog"
)

// warnings is a zerolog hook that appends every warning's message, one
// line each, to a file: the warnings every padrun of a script gave.
type warnings string

func (w warnings) Run(_ *zerolog.Event, level zerolog.Level, msg string) {
	if level != zerolog.WarnLevel {
		return
	}
	f, err := os.OpenFile(string(w), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	f.WriteString(strings.ReplaceAll(msg, "\n", " ") + "\n") // one write: lines of padruns at once stay whole
}

// countWarns: the count is on unless -count-warnings=false (to see a
// script's other failures first).
var countWarns = flag.Bool("count-warnings", true, "fail a harness script on a warning it does not declare with warns")

// allowed holds, by work folder, the warnings a script calls for (warns).
var allowed sync.Map

// cmdWarns REGEXP... declares warnings the script calls for: at its end,
// every warning a padrun of it gave must match one (countWarnings).
func cmdWarns(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: warns REGEXP...")
	}
	v, _ := allowed.LoadOrStore(ts.Getenv("WORK"), &[]*regexp.Regexp{})
	list := v.(*[]*regexp.Regexp)
	for _, a := range args {
		re, err := regexp.Compile(a)
		ts.Check(err)
		*list = append(*list, re)
	}
}

// countWarnings has every padrun of the script note its warnings, and
// fails the script at its end on one that it did not call for with warns
// (docs/spec.md §8: no warning on a run guarded as promised).
func countWarnings(env *testscript.Env) {
	if !*countWarns {
		return
	}
	file := filepath.Join(env.WorkDir, ".padrun-warnings")
	env.Setenv("PADRUN_TEST_WARNINGS", file)
	env.Defer(func() {
		b, _ := os.ReadFile(file)
		var list []*regexp.Regexp
		if v, ok := allowed.LoadAndDelete(env.WorkDir); ok {
			list = *v.(*[]*regexp.Regexp)
		}
		var stray []string
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if line != "" && !slices.ContainsFunc(list, func(re *regexp.Regexp) bool { return re.MatchString(line) }) {
				stray = append(stray, line)
			}
		}
		if len(stray) > 0 {
			env.T().Fatal("warnings the script does not call for (add warns 'REGEXP' if it should):\n" + strings.Join(stray, "\n"))
		}
	})
}
