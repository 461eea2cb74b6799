package harness

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func must(a Adapter, ok bool) Adapter {
	if !ok {
		panic("no such adapter")
	}
	return a
}

// incomplete says what an adapter's declaration lacks; nil when it has
// everything a harness needs (the package doc's list).
func incomplete(a Adapter) error {
	var miss []string
	need := func(ok bool, what string) {
		if !ok {
			miss = append(miss, what)
		}
	}
	need(a.Name != "", "a name")
	need(a.read != nil, "argv rules (read)")
	if a.Name == None {
		return joinMissing(a.Name, miss)
	}
	need(a.Agent != "", "an agent name")
	need(len(a.Packages) > 0, "npm packages")
	oldest, okOld := parseVersion(a.Oldest)
	newest, okNew := parseVersion(a.Newest)
	need(okOld && okNew && compare(oldest, newest) <= 0, "tested versions (oldest <= newest)")
	need(a.Sessions.Folder != "" && a.Sessions.Pattern != "", "a session folder and file pattern")
	need(a.Sessions.Ranking != "", "the harness's ranking")
	if c := a.Companion; c != nil {
		need(c.LoadedBy != "", "the companion's loading flag")
		need(c.load != nil && c.wanted != nil, "how argv loads the companion, and when")
		need((c.Script != nil) == (c.ScriptName != ""), "the companion script's name")
		// A settings file is named by a variable, or by the flag that
		// loads it (droid's --settings FILE).
		need(c.SettingsEnv == "" || c.settings != nil, "the companion's settings file")
		need(c.settings == nil || c.SettingsEnv != "" || strings.HasPrefix(c.LoadedBy, "-"), "the variable or flag that names the companion's settings file")
		need(c.Script != nil || c.Hook != "", "a companion script or hook")
		need(c.CanCancel || c.Hook != "", "a companion that cancels, or a hook padrun ends the harness from")
	}
	return joinMissing(a.Name, miss)
}

func joinMissing(name string, miss []string) error {
	if len(miss) == 0 {
		return nil
	}
	return fmt.Errorf("harness %q declares no %s", name, strings.Join(miss, ", no "))
}

// TestAdapters_Complete: every harness declares all that padrun needs of
// it, once, and None is last; a declaration that lacks a part is caught.
func TestAdapters_Complete(t *testing.T) {
	seen := map[string]bool{}
	for _, a := range adapters {
		if err := incomplete(a); err != nil {
			t.Error(err)
		}
		for _, p := range a.HiddenMarkers {
			// A bad pattern would hide nothing, silently.
			if _, err := filepath.Match(p, "x"); err != nil {
				t.Errorf("harness %q hides markers of %q: %v", a.Name, p, err)
			}
		}
		if seen[a.Name] {
			t.Errorf("harness %q is declared twice", a.Name)
		}
		seen[a.Name] = true
	}
	if adapters[len(adapters)-1].Name != None {
		t.Errorf("the last adapter is %q, want %q", adapters[len(adapters)-1].Name, None)
	}
	pi := must(Lookup("pi"))
	for _, broken := range []func(*Adapter){
		func(a *Adapter) { a.Oldest, a.Newest = "", "" },
		func(a *Adapter) { a.Newest = "0.1.0" },
		func(a *Adapter) { a.Packages = nil },
		func(a *Adapter) { a.read = nil },
		func(a *Adapter) { a.Agent = "" },
		func(a *Adapter) { a.Sessions.Ranking = "" },
		func(a *Adapter) { c := *a.Companion; c.LoadedBy = ""; a.Companion = &c },
	} {
		a := pi
		a.Packages = slices.Clone(pi.Packages)
		broken(&a)
		if incomplete(a) == nil {
			t.Errorf("an incomplete declaration passes: %+v", a)
		}
	}
}

// TestAdapters_SessionsAsRead: the declared session file pattern and depth
// are what each adapter's read watches for a new session.
func TestAdapters_SessionsAsRead(t *testing.T) {
	env := Env{Getenv: func(string) string { return "" }, Cwd: t.TempDir(), Home: t.TempDir(), Version: "unknown"}
	for _, name := range Names() {
		a := must(Lookup(name))
		p := a.read([]string{name}, env)
		if a.Sessions.Database {
			// Rows of a database: no folder shows a new one; the companion claims it.
			if len(p.Watch) > 0 || a.Companion == nil {
				t.Errorf("%s: sessions in a database, yet a folder watch %v or no companion", name, p.Watch)
			}
			continue
		}
		if len(p.Watch) == 0 {
			t.Errorf("%s: a new session watches no folder", name)
		}
		for _, w := range p.Watch {
			if w.Pattern != a.Sessions.Pattern || w.Depth != a.Sessions.Depth {
				t.Errorf("%s watches %q at depth %d, declares %q at depth %d", name, w.Pattern, w.Depth, a.Sessions.Pattern, a.Sessions.Depth)
			}
		}
	}
}

// TestNoHarnessNamesOutside: no package outside this one knows a harness by
// its name: no comparison, switch case or map key with a harness's name as
// a string, and no list of harness names. Adding a harness then touches
// this folder only.
func TestNoHarnessNamesOutside(t *testing.T) {
	names := append(Names(), None)
	isName := func(e ast.Expr) (string, bool) {
		lit, ok := e.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(lit.Value)
		return s, err == nil && slices.Contains(names, s)
	}
	root, here := "../..", filepath.Join("wrapper", "harness")
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel == here || rel != "." && strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		files++
		ast.Inspect(f, func(n ast.Node) bool {
			var found []ast.Expr
			switch n := n.(type) {
			case *ast.BinaryExpr:
				if n.Op == token.EQL || n.Op == token.NEQ {
					found = append(found, n.X, n.Y)
				}
			case *ast.CaseClause:
				found = n.List
			case *ast.KeyValueExpr:
				found = append(found, n.Key)
			case *ast.CompositeLit:
				count := 0
				for _, e := range n.Elts {
					if _, ok := isName(e); ok {
						count++
					}
				}
				if count > 1 {
					t.Errorf("%s: a list of harness names: use harness.Names", fset.Position(n.Pos()))
				}
			}
			for _, e := range found {
				if s, ok := isName(e); ok {
					t.Errorf("%s: compares the harness name %q as a string: declare what it needs in wrapper/harness's adapter", fset.Position(e.Pos()), s)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatal(errors.New("the scan found few Go files: is the module root ../.. ?"))
	}
}
