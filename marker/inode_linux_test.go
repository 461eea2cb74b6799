package marker

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/padrun/padrun/marker/ident"
)

// inodeHeldNow reads /proc/locks for a flock on path's inode.
func inodeHeldNow(t *testing.T, path string) bool {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	_, held, err := ident.FlockHolder(st.Ino)
	if err != nil {
		t.Fatal(err)
	}
	return held
}

// Two names of one inode in one process share its lock (flock would
// refuse the second open otherwise), and it is held until the last goes.
func TestInode_SharedByTwoNames_HeldUntilLastRelease(t *testing.T) {
	dir := t.TempDir()
	s, h := filepath.Join(dir, "s.jsonl"), filepath.Join(dir, "h.jsonl")
	if err := os.WriteFile(s, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(s, h); err != nil {
		t.Fatal(err)
	}
	ls, err := TryAcquire(s, newMarker(s), self)
	if err != nil {
		t.Fatal(err)
	}
	lh, err := TryAcquire(h, newMarker(h), self)
	if err != nil {
		t.Fatalf("a second name of a held inode in the same process: %v", err)
	}
	if !ls.Inode() || !lh.Inode() || !inodeHeldNow(t, s) {
		t.Fatal("the session file's own inode is not held")
	}
	if err := ls.Release(); err != nil {
		t.Fatal(err)
	}
	if !inodeHeldNow(t, h) {
		t.Fatal("the inode was released while a second name still holds it")
	}
	if err := lh.Release(); err != nil {
		t.Fatal(err)
	}
	if inodeHeldNow(t, h) {
		t.Fatal("the inode is still held after the last release")
	}
}

// After renames, a lock names where its files are now, from its
// descriptors: the held file's new name, and its folder's new place.
func TestInode_Names_FollowRenames(t *testing.T) {
	dir := t.TempDir()
	d := filepath.Join(dir, "d")
	s := filepath.Join(d, "s.jsonl")
	if err := os.Mkdir(d, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := TryAcquire(s, newMarker(s), self)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if file, names := l.Names(); file != s || len(names) != 1 || names[0] != s {
		t.Fatalf("unmoved: Names() = %q, %q", file, names)
	}
	tt := filepath.Join(d, "t.jsonl")
	if err := os.Rename(s, tt); err != nil {
		t.Fatal(err)
	}
	if file, names := l.Names(); file != s || len(names) != 1 || names[0] != tt {
		t.Fatalf("file renamed: Names() = %q, %q, want %q, [%q]", file, names, s, tt)
	}
	e := filepath.Join(dir, "e")
	if err := os.Rename(d, e); err != nil {
		t.Fatal(err)
	}
	file, names := l.Names()
	if want := filepath.Join(e, "s.jsonl"); file != want || len(names) != 1 || names[0] != filepath.Join(e, "t.jsonl") {
		t.Fatalf("folder renamed: Names() = %q, %q, want %q", file, names, want)
	}
	if err := l.MoveTo(file); err != nil {
		t.Fatal(err)
	}
	if m, err := Read(file); err != nil || m.SessionFile != file {
		t.Fatalf("the moved marker: %+v, %v; want it to name %s", m, err, file)
	}
}
