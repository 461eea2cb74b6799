//go:build linux || darwin || freebsd

package wrapper

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/padrun/padrun/wrapper/harness"
)

// Every adapter's command has an entry in the folder of harness entries, a
// symlink to padrun's own executable, and the folder is the user's own,
// 0700 (docs/spec.md §7); a live run's folder is never pruned.
func TestShims_EveryHarnessCommand(t *testing.T) {
	runtime := t.TempDir()
	dir, err := makeShims(runtime)
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("folder %s: %v, %v; want a 0700 folder", dir, fi, err)
	}
	exe, _ := os.Executable()
	var names []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		names = append(names, e.Name())
		if to, err := os.Readlink(filepath.Join(dir, e.Name())); err != nil || to != exe {
			t.Errorf("%s -> %q, %v; want a symlink to %s", e.Name(), to, err, exe)
		}
	}
	want := slices.Sorted(slices.Values(harness.Names()))
	if !slices.Equal(names, want) {
		t.Errorf("entries %v, want one per harness %v", names, want)
	}
	if n := pruneShims(filepath.Dir(dir)); n != 0 {
		t.Errorf("pruneShims removed %d folders of a live padrun", n)
	}
	if _, err := os.Lstat(dir); err != nil {
		t.Errorf("the live run's folder is gone: %v", err)
	}
}

// BenchmarkShims is the folder of harness entries' cost to a run: made,
// then removed (go test -run '^$' -bench Shims ./wrapper).
func BenchmarkShims(b *testing.B) {
	runtime := b.TempDir()
	for b.Loop() {
		dir, err := makeShims(runtime)
		if err != nil {
			b.Fatal(err)
		}
		os.RemoveAll(dir)
	}
}
