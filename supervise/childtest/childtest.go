// Package childtest runs a test binary again as a named helper child, as
// os/exec's own tests do: TestMain names the helpers, a test starts one by
// its name, and a run of every test fails when a helper is never started,
// so that none outlives the tests that needed it.
package childtest

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"sync"
	"testing"
)

// env names the helper a child of the test binary runs.
const env = "PADRUN_TEST_HELPER"

var used sync.Map // helper name -> true

// Main is a package's TestMain, which exits with the status it returns. In
// a helper child it runs the helper that its environment names: 0 when the
// helper returns (2 for a name not in helpers). Else it runs the tests and,
// when every test ran (no -test.run or -test.list) and passed, fails the
// run if a helper of helpers was never named by Env or Command.
func Main(m *testing.M, helpers map[string]func()) int {
	if name, ok := os.LookupEnv(env); ok {
		f, ok := helpers[name]
		if !ok {
			fmt.Fprintf(os.Stderr, "childtest: no helper %q\n", name)
			return 2
		}
		os.Unsetenv(env) // its own children run the tests unless told otherwise
		f()
		return 0
	}
	code := m.Run()
	if code == 0 && flag.Lookup("test.run").Value.String() == "" && flag.Lookup("test.list").Value.String() == "" {
		for _, name := range slices.Sorted(maps.Keys(helpers)) {
			if _, ok := used.Load(name); !ok {
				fmt.Fprintf(os.Stderr, "childtest: helper %q is never started: remove it or test with it\n", name)
				code = 1
			}
		}
	}
	return code
}

// Env returns the environment entry that makes a child of the test binary
// (os.Args[0]) run helper name, and counts the helper used. A test calls
// it before it may skip, as os/exec's tests do: a helper a test names is
// not dead code where that test cannot run.
func Env(name string) string {
	used.Store(name, true)
	return env + "=" + name
}

// Command is exec.Command of the test binary running helper name, with
// this process's environment.
func Command(name string) *exec.Cmd {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), Env(name))
	return cmd
}
