//go:build linux || darwin || freebsd

package wrapper

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
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
	defer os.Remove(dir)
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("folder %s: %v, %v; want a 0700 folder", dir, fi, err)
	}
	exe, _ := os.Executable()
	if got := entryNames(t, dir, exe); !slices.Equal(got, slices.Sorted(slices.Values(harness.Names()))) {
		t.Errorf("entries %v, want one per harness %v", got, harness.Names())
	}
	if n := pruneShims(filepath.Dir(dir)); n != 0 {
		t.Errorf("pruneShims removed %d folders of a live padrun", n)
	}
	if _, err := os.Lstat(dir); err != nil {
		t.Errorf("the live run's folder is gone: %v", err)
	}
}

// entryNames is the names in a folder of harness entries, each checked to
// be a symlink to exe.
func entryNames(t *testing.T, dir, exe string) []string {
	t.Helper()
	var names []string
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		names = append(names, e.Name())
		if to, err := os.Readlink(filepath.Join(dir, e.Name())); err != nil || to != exe {
			t.Errorf("%s -> %q, %v; want a symlink to %s", e.Name(), to, err, exe)
		}
	}
	return names
}

// A run's folder is a name of its own for the entries every run of this
// executable shares: a second run makes its name and nothing else, and
// removing a run's name leaves the entries to the others.
func TestShims_SharedEntries(t *testing.T) {
	runtime := t.TempDir()
	one, err := makeShims(runtime)
	if err != nil {
		t.Fatal(err)
	}
	two, err := makeShims(runtime)
	if err != nil {
		t.Fatal(err)
	}
	if one == two {
		t.Fatalf("two runs got the same name %s", one)
	}
	base := filepath.Dir(one)
	for _, d := range []string{one, two} {
		if fi, err := os.Lstat(d); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s: %v, %v; want a symlink to the shared entries", d, fi, err)
		}
	}
	a, _ := filepath.EvalSymlinks(one)
	b, _ := filepath.EvalSymlinks(two)
	if a != b || !strings.HasPrefix(filepath.Base(a), entriesPrefix) {
		t.Errorf("the runs' entries are %s and %s; want one shared %s folder", a, b, entriesPrefix)
	}
	os.Remove(one)
	if _, err := os.Stat(two); err != nil {
		t.Errorf("the second run's folder went with the first's name: %v", err)
	}
	left, _ := os.ReadDir(base)
	if len(left) != 2 { // two's name and the entries
		t.Errorf("control folder holds %d names, want 2: %v", len(left), left)
	}
}

// Entries that are not whole (a cleaner of old files took one, or someone
// put one more) are made whole again before a run uses them.
func TestShims_EntriesMadeWhole(t *testing.T) {
	exe, _ := os.Executable()
	want := slices.Sorted(slices.Values(harness.Names()))
	for _, c := range []struct {
		name  string
		spoil func(entries string)
	}{
		{"one taken", func(e string) { os.Remove(filepath.Join(e, want[0])) }},
		{"one more", func(e string) { os.Symlink(exe, filepath.Join(e, "sh")) }},
		{"one pointing elsewhere", func(e string) {
			os.Remove(filepath.Join(e, want[len(want)-1]))
			os.Symlink("/bin/sh", filepath.Join(e, want[len(want)-1]))
		}},
		{"all gone", func(e string) { os.RemoveAll(e) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			runtime := t.TempDir()
			first, err := makeShims(runtime)
			if err != nil {
				t.Fatal(err)
			}
			entries, _ := filepath.EvalSymlinks(first)
			c.spoil(entries)
			next, err := makeShims(runtime)
			if err != nil {
				t.Fatal(err)
			}
			if got := entryNames(t, next, exe); !slices.Equal(got, want) {
				t.Errorf("entries %v, want %v", got, want)
			}
			if got, _ := filepath.EvalSymlinks(next); got != entries {
				t.Errorf("the entries moved to %s, want them at %s", got, entries)
			}
		})
	}
}

// Runs that start together all get whole entries, and leave no folder
// half made.
func TestShims_ManyAtOnce(t *testing.T) {
	runtime := t.TempDir()
	exe, _ := os.Executable()
	want := slices.Sorted(slices.Values(harness.Names()))
	dirs := make([]string, 8)
	var wg sync.WaitGroup
	for i := range dirs {
		wg.Go(func() {
			d, err := makeShims(runtime)
			if err != nil {
				t.Error(err)
			}
			dirs[i] = d
		})
	}
	wg.Wait()
	for _, d := range dirs {
		if d != "" && !slices.Equal(entryNames(t, d, exe), want) {
			t.Errorf("%s is not whole", d)
		}
	}
	names, _ := os.ReadDir(filepath.Join(runtime, "padrun"))
	for _, n := range names {
		if strings.HasPrefix(n.Name(), freshPrefix) {
			t.Errorf("a half-made folder is left: %s", n.Name())
		}
	}
}

// BenchmarkShims is the folder of harness entries' cost to a run once the
// entries are made: its name made, then removed (go test -run '^$' -bench
// Shims ./wrapper).
func BenchmarkShims(b *testing.B) {
	runtime := b.TempDir()
	for b.Loop() {
		dir, err := makeShims(runtime)
		if err != nil {
			b.Fatal(err)
		}
		os.Remove(dir)
	}
}
