//go:build unix

package wrapper

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestResolve_AsTheKernelDoes checks each rule of docs/spec.md §2.3: symlinks
// first, ".." after them, the last component too, from the real working
// folder, for paths that need not exist.
func TestResolve_AsTheKernelDoes(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mk := func(p string) { os.MkdirAll(filepath.Join(dir, p), 0o700) }
	ln := func(name, target string) {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	mk("real/proj")
	ln("proj", "real/proj")               // a relative symlink to a folder
	ln("abs", filepath.Join(dir, "real")) // an absolute one
	ln("alias.jsonl", "real/s.jsonl")     // a symlink as the session file (target missing)
	ln("chain.jsonl", "alias.jsonl")      // a chain
	ln("real/proj/up", "..")              // a symlink to ".."
	ln("later", "real/new/deeper")        // a symlink to folders not made yet
	ln("loop", "loop")                    // a loop
	os.WriteFile(filepath.Join(dir, "real/file"), nil, 0o600)
	real := filepath.Join(dir, "real")
	tests := []struct{ in, want string }{
		{"proj/../s.jsonl", real + "/s.jsonl"},
		{"abs/proj/../s.jsonl", real + "/s.jsonl"},
		{"alias.jsonl", real + "/s.jsonl"},
		{"chain.jsonl", real + "/s.jsonl"},
		{"proj/up/s.jsonl", real + "/s.jsonl"},
		{"proj/./x/../s.jsonl", real + "/proj/s.jsonl"},
		{"later/s.jsonl", real + "/new/deeper/s.jsonl"},
		{"missing/sub/../s.jsonl", dir + "/missing/s.jsonl"},
		{"real//s.jsonl", real + "/s.jsonl"},
		{dir + "/proj/../s.jsonl", real + "/s.jsonl"},
		{"/", "/"},
	}
	t.Chdir(dir)
	for _, tt := range tests {
		got, err := Resolve(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"loop/s.jsonl", "loop", "real/file/s.jsonl", ""} {
		if got, err := Resolve(bad); err == nil {
			t.Errorf("Resolve(%q) = %q, want an error", bad, got)
		}
	}

	// From a symlinked working folder: the real one counts, never $PWD.
	t.Chdir(filepath.Join(dir, "proj"))
	t.Setenv("PWD", filepath.Join(dir, "proj"))
	for in, want := range map[string]string{"../s.jsonl": real + "/s.jsonl", "s.jsonl": real + "/proj/s.jsonl", ".": real + "/proj"} {
		if got, err := Resolve(in); err != nil || got != want {
			t.Errorf("from proj: Resolve(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := CanonicalFile("x/"); err == nil || !strings.Contains(err.Error(), "names a folder") {
		t.Errorf("CanonicalFile(\"x/\") = %v, want a folder refused", err)
	}
}

func TestCheckNames_HardLinks(t *testing.T) {
	dir := t.TempDir()
	one, two := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	os.WriteFile(one, nil, 0o600)
	var warned []string
	warn := func(s string) { warned = append(warned, s) }
	if err := checkNames([]string{one, filepath.Join(dir, "missing")}, true, warn); err != nil || len(warned) != 0 {
		t.Fatalf("one name: %v, %v", err, warned)
	}
	if err := os.Link(one, two); err != nil {
		t.Fatal(err)
	}
	if err := checkNames([]string{one}, false, warn); err != nil || len(warned) != 1 || !strings.Contains(warned[0], "2 names") {
		t.Fatalf("two names: %v, %v; want one warning", err, warned)
	}
	if err := checkNames([]string{two}, true, warn); err == nil || !strings.Contains(err.Error(), "--strict") {
		t.Fatalf("two names under --strict: %v, want a refusal", err)
	}
}
