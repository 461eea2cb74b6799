package main

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/padrun/padrun/wrapper"
)

// parseFlags parses args into fs as pflag does, but refuses what pflag
// would take silently: a flag that takes a value followed by "--" or by
// another flag (`--guard -- true` would guard a file named "--", `--guard
// --wait 5` would run "5"), and an unknown flag gets the nearest one as a
// hint. advice is the hint of any other usage error.
func parseFlags(fs *pflag.FlagSet, args []string, interspersed bool, advice string) error {
	if err := swallowed(fs, args, interspersed); err != nil {
		return err
	}
	err := fs.Parse(args)
	if err == nil {
		return nil
	}
	if name, ok := strings.CutPrefix(err.Error(), "unknown flag: --"); ok {
		if near := nearFlag(fs, name); near != "" {
			advice = "did you mean --" + near + "? (" + advice + ")"
		}
	}
	return &wrapper.UsageError{Err: err, Advice: advice}
}

// swallowed finds a flag given as its own word whose value would be the
// next word although that word is "--" or looks like a flag: a usage
// error. A value that really starts with a dash is given with "=".
func swallowed(fs *pflag.FlagSet, args []string, interspersed bool) error {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return nil
		}
		if len(a) < 2 || a[0] != '-' {
			if !interspersed {
				return nil // the command: the rest is the child's
			}
			continue
		}
		var f *pflag.Flag
		switch {
		case strings.Contains(a, "="):
			continue
		case strings.HasPrefix(a, "--"):
			f = fs.Lookup(a[2:])
		case len(a) == 2:
			f = fs.ShorthandLookup(a[1:])
		}
		if f == nil || f.NoOptDefVal != "" {
			continue // a bool, or unknown: fs.Parse says so
		}
		if i+1 < len(args) && looksLikeFlag(args[i+1]) {
			what, _ := pflag.UnquoteUsage(f)
			if what == "" {
				what = "value"
			}
			return &wrapper.UsageError{
				Err:    fmt.Errorf("--%s needs a %s, not %q", f.Name, what, args[i+1]),
				Advice: fmt.Sprintf("--%s takes a %s right after it; one that starts with a dash is given as --%s=%s", f.Name, what, f.Name, what),
			}
		}
		i++ // its value
	}
	return nil
}

// looksLikeFlag reports whether a word would be read as a flag, or is the
// end of the flags: "-" alone is not (it names standard input), nor is a
// negative number (a bad duration is told as such).
func looksLikeFlag(s string) bool {
	return len(s) > 1 && s[0] == '-' && (s[1] < '0' || s[1] > '9') && s[1] != '.'
}

// nearFlag is the flag of fs that name is most likely a typo of, or "".
func nearFlag(fs *pflag.FlagSet, name string) string {
	name, _, _ = strings.Cut(name, "=")
	best, bestD := "", 3
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		limit := 2
		if len(f.Name) <= 4 {
			limit = 1
		}
		if d := editDistance(name, f.Name); d > 0 && d <= limit && d < bestD {
			best, bestD = f.Name, d
		}
	})
	return best
}
