//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// unavailable skips t when something it needs is missing from a
// contributor's machine, and fails it when CI is set: CI proves everything.
func unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") != "" {
		t.Fatalf("%s (CI is set: nothing may be skipped)", msg)
	}
	t.Skipf("skipped: %s (it fails instead when CI is set)", msg)
}

// requireRoot skips or fails t, as unavailable does, unless it runs as root.
func requireRoot(t testing.TB, why string) {
	t.Helper()
	if os.Geteuid() != 0 {
		unavailable(t, "needs root to %s: run the tests as root (CI does)", why)
	}
}

// requireTool skips or fails t, as unavailable does, unless every named
// program is installed.
func requireTool(t testing.TB, names ...string) {
	t.Helper()
	if err := missing(names...); err != nil {
		unavailable(t, "%v", err)
	}
}

// missing says which of the named programs is not installed, or nil.
// python3-yaml stands for the PyYAML module of /usr/bin/python3.
func missing(names ...string) error {
	for _, name := range names {
		var err error
		if name == "python3-yaml" {
			err = exec.Command("/usr/bin/python3", "-c", "import yaml").Run()
		} else {
			_, err = exec.LookPath(name)
		}
		if err != nil {
			return fmt.Errorf("%s is not installed: run ./test.sh, which installs it", name)
		}
	}
	return nil
}

// installed is the scripts' condition [installed:NAME]: whether NAME is
// installed. When it is not and CI is set, the condition is an error that
// fails the script, so that `[!installed:zsh] skip` only skips off CI.
func installed(cond string) (bool, error) {
	name, ok := strings.CutPrefix(cond, "installed:")
	if !ok {
		return false, fmt.Errorf("unknown condition %q", cond)
	}
	err := missing(name)
	if err != nil && os.Getenv("CI") != "" {
		return false, fmt.Errorf("%v (CI is set: nothing may be skipped)", err)
	}
	return err == nil, nil
}
