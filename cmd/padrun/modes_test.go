package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/padrun/padrun/wrapper/harness"
)

// TestModes_Documented keeps docs/harnesses.md's table of harness x mode
// what the adapters declare (harness.Modes), every harness in it, and every
// "guarded" cell naming a script that exists: the test that proves it.
func TestModes_Documented(t *testing.T) {
	for _, name := range harness.Names() {
		gs := harness.Modes(name)
		if len(gs) == 0 {
			t.Errorf("%s declares no modes", name)
		}
		for _, g := range gs {
			if g.Guarded() == (g.Why != "") {
				t.Errorf("%s %s: guarded by %q, unknown because %q: one of the two", name, g.Mode, g.By, g.Why)
			}
			if !g.Guarded() {
				continue
			}
			found := false
			for _, dir := range []string{"harness", "script", "terminal", "root"} {
				if _, err := os.Stat(filepath.Join("testdata", dir, g.By+".txtar")); err == nil {
					found = true
				}
			}
			if !found {
				t.Errorf("%s %s is guarded by %q, which is no script in testdata", name, g.Mode, g.By)
			}
		}
	}
	doc, err := os.ReadFile("../../docs/harnesses.md")
	if err != nil {
		t.Fatal(err)
	}
	if table := harness.ModesTable(); !strings.Contains(string(doc), table) {
		t.Errorf("docs/harnesses.md lacks the table of guarded modes, as the adapters declare it:\n%s", table)
	}
}
