package harness

import (
	"cmp"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// placeholder stands in, in a seed, for an argument a unit test computes
// (an id constant, a temporary path).
const placeholder = "11111111-1111-4111-8111-111111111111"

// unitArgv is every argv literal of this package's unit tests that starts
// with a registered harness's name ([]string{"pi", "-c"}), by harness,
// each as its arguments after the name joined by NUL: the fuzz seeds.
func unitArgv(tb testing.TB) map[string][]string {
	tb.Helper()
	files, err := filepath.Glob("*_test.go")
	if err != nil || len(files) == 0 {
		tb.Fatalf("test files: %v %v", files, err)
	}
	known := Names()
	out := map[string][]string{}
	for _, f := range files {
		src, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
		if err != nil {
			tb.Fatal(err)
		}
		ast.Inspect(src, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok || len(lit.Elts) == 0 || !isStringSlice(lit.Type) {
				return true
			}
			words := make([]string, len(lit.Elts))
			for i, e := range lit.Elts {
				words[i] = placeholder
				if b, ok := e.(*ast.BasicLit); ok && b.Kind == token.STRING {
					words[i], _ = strconv.Unquote(b.Value)
				}
			}
			if slices.Contains(known, words[0]) {
				out[words[0]] = append(out[words[0]], strings.Join(words[1:], "\x00"))
			}
			return true
		})
	}
	return out
}

func isStringSlice(e ast.Expr) bool {
	a, ok := e.(*ast.ArrayType)
	if !ok || a.Len != nil {
		return false
	}
	id, ok := a.Elt.(*ast.Ident)
	return ok && id.Name == "string"
}

// TestFuzzSeeds_EveryAdapter: every registered harness's unit tests give
// the fuzz targets seeds of its argv.
func TestFuzzSeeds_EveryAdapter(t *testing.T) {
	seeds := unitArgv(t)
	for _, name := range Names() {
		if len(seeds[name]) == 0 {
			t.Errorf("%s: no unit test argv []string{%q, ...} to seed FuzzAdapters from", name, name)
		}
	}
}

// FuzzAdapters is fuzzAdapter's rules for every registered harness, by
// the oldest, the newest and unknown releases' rules, and its companion's
// argv: every adapter takes any argv without panicking or failing, keeps
// argv[0] and every argument (--no-pin: argv as given; but what it
// leaves to the companion without --no-companion), names only
// absolute files and folders, and a companion that loads keeps argv[0]
// and every argument too.
func FuzzAdapters(f *testing.F) {
	names := Names()
	seeds := unitArgv(f)
	for i, name := range names {
		for _, s := range seeds[name] {
			f.Add(uint8(i), s)
		}
	}
	home := f.TempDir()
	f.Fuzz(func(t *testing.T, which uint8, line string) {
		name := names[int(which)%len(names)]
		a, _ := Lookup(name)
		argv := append([]string{name}, strings.Split(line, "\x00")...)
		for _, version := range []string{"", a.Oldest, a.Newest} {
			for _, no := range []struct{ pin, companion bool }{{false, false}, {true, false}, {false, true}} {
				env := Env{Getenv: func(string) string { return "" }, Cwd: "/w/p", Home: home, Now: time.Unix(0, 0), NoPin: no.pin, NoCompanion: no.companion, Version: version}
				p, err := Resolve(name, argv, env)
				if err != nil {
					t.Fatalf("%s %s: %v", name, version, err)
				}
				checkFuzzPlan(t, name, version, argv, p, no.pin, no.companion)
			}
		}
	})
}

// checkFuzzPlan checks fuzzAdapter's rules on p, the plan of argv.
func checkFuzzPlan(t *testing.T, name, version string, argv []string, p Plan, noPin, noCompanion bool) {
	t.Helper()
	at := name + "@" + cmp.Or(version, "unknown")
	if p.Harness != name || p.Argv[0] != name {
		t.Fatalf("%s: harness %q, argv[0] %q", at, p.Harness, p.Argv)
	}
	// Only what the companion does in the harness's place leaves argv
	// (pi 1.x's -r --name), and only when it loads.
	handed := len(p.CompanionEnv) > 0 && !noCompanion
	if noPin && !handed && !slices.Equal(p.Argv, argv) {
		t.Fatalf("%s: --no-pin changed argv: %q -> %q", at, argv, p.Argv)
	}
	if len(p.Argv) < len(argv) && !handed {
		t.Fatalf("%s: arguments dropped: %q -> %q", at, argv, p.Argv)
	}
	for _, f := range p.Files {
		if !filepath.IsAbs(f) {
			t.Fatalf("%s: relative session file %q of %q", at, f, argv)
		}
	}
	for _, w := range slices.Concat(p.Watch, p.Lease) {
		if !filepath.IsAbs(w.Dir) {
			t.Fatalf("%s: relative folder %q of %q", at, w.Dir, argv)
		}
	}
	if !slices.Contains([]string{"", ModePrint, ModeJSON, ModeRPC, ModeInteractive}, p.Mode) {
		t.Fatalf("%s: mode %q of %q", at, p.Mode, argv)
	}
	c := CompanionOf(p)
	if c == nil {
		return
	}
	load := Load{Script: "/c/companion.js", Hook: "/bin/padrun " + c.Hook, Settings: "/c/settings.json", Getenv: func(string) string { return "" }, Version: version}
	if out, ok := c.Argv(p.Argv, load); ok && (out[0] != name || len(out) < len(p.Argv)) {
		t.Fatalf("%s: companion's argv %q of %q", at, out, p.Argv)
	}
}

// headerSeeds are a header line of each harness whose files name their id
// in one (Adapter.header), as its unit tests and its own files write it.
var headerSeeds = map[string][]string{
	"pi": {`{"type":"session","version":3,"id":"` + placeholder + `","timestamp":"2026-11-29T10:00:00.000Z","cwd":"/w/proj"}`},
	"omp": {`{"type":"session","version":3,"id":"` + placeholder + `","cwd":"/w/proj"}`,
		`{"type":"title","title":"t"}` + "\n" + `{"type":"session","version":3,"id":"` + placeholder + `","cwd":"/w/proj"}`},
	"codex":  {`{"type":"session_meta","payload":{"id":"` + placeholder + `","cwd":"/w/proj"}}`},
	"gemini": {`{"sessionId":"` + placeholder + `","projectHash":"abc","startTime":"2026-11-29T10:00:00.000Z","kind":"main"}`},
}

// TestHeaderID_EveryReader: every harness that reads a header reads its
// own, and HeaderID finds its id in a file of it; a harness without one
// has no seeds.
func TestHeaderID_EveryReader(t *testing.T) {
	dir := t.TempDir()
	for _, name := range Names() {
		a, _ := Lookup(name)
		if (a.header == nil) != (len(headerSeeds[name]) == 0) {
			t.Errorf("%s: header reader %v, seeds %q", name, a.header != nil, headerSeeds[name])
			continue
		}
		if a.header == nil {
			continue
		}
		line := headerSeeds[name][0]
		if id, ok := a.header(json.NewDecoder(strings.NewReader(line))); !ok || id != placeholder {
			t.Errorf("%s: its header %s reads %q, %v", name, line, id, ok)
		}
		file := filepath.Join(dir, name+".jsonl")
		if err := os.WriteFile(file, []byte(line+"\n{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if id := HeaderID(file); id != placeholder {
			t.Errorf("%s: HeaderID of %s is %q", name, line, id)
		}
	}
}

// FuzzHeaders: every header reader takes any head of a file without
// panicking; it says the id only of a header it knows, and what follows
// that header changes nothing; HeaderID gives the id of the first reader
// that knows the file's header.
func FuzzHeaders(f *testing.F) {
	var readers []Adapter
	for _, a := range adapters {
		if a.header != nil {
			readers = append(readers, a)
		}
	}
	for _, a := range readers {
		for _, s := range headerSeeds[a.Name] {
			f.Add(s, `{"type":"session","id":"later"}`)
		}
	}
	dir := f.TempDir()
	read := func(a Adapter, head string) (string, bool) {
		return a.header(json.NewDecoder(strings.NewReader(head)))
	}
	f.Fuzz(func(t *testing.T, head, tail string) {
		want, found := "", false
		for _, a := range readers {
			id, ok := read(a, head)
			if !ok && id != "" {
				t.Fatalf("%s: %q read as no header, with id %q", a.Name, head, id)
			}
			if !ok {
				continue
			}
			if id2, ok2 := read(a, head+"\n"+tail); id2 != id || !ok2 {
				t.Fatalf("%s: %q reads %q, and %q, %v once followed by %q", a.Name, head, id, id2, ok2, tail)
			}
			if !found {
				want, found = id, true
			}
		}
		file := filepath.Join(dir, "s.jsonl")
		if err := os.WriteFile(file, []byte(head), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := HeaderID(file); len(head) <= 1<<20 && got != want {
			t.Fatalf("HeaderID of %q is %q, its first reader's %q", head, got, want)
		}
	})
}

// An omp session whose file opens with its title line names its id in the
// session line after it: HeaderID reads it as omp's adapter does
// (ompSessionID), so the file's etcd key (wrapper.FileSessionID) is the
// one a run of it holds. It read "" before.
func TestHeaderID_OmpTitledSession(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s.jsonl")
	head := `{"type":"title","title":"fix the tests"}` + "\n" + `{"type":"session","version":3,"id":"` + placeholder + `","cwd":"/w/p"}` + "\n"
	if err := os.WriteFile(file, []byte(head+`{"type":"message"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if id, want := HeaderID(file), ompSessionID(file); id != want || id != placeholder {
		t.Errorf("HeaderID %q, omp's adapter reads %q", id, want)
	}
}
