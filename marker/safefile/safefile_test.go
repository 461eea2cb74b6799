package safefile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// symlinkOrSkip makes link point at target, or skips where the user may
// not make symlinks (Windows without developer mode).
func symlinkOrSkip(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("cannot make a symlink here: %v", err)
	}
}

// TestReadBounded_Bound: a file of exactly the bound is read with its
// mtime; one byte more is ErrTooLarge; a folder is ErrNotRegular.
func TestReadBounded_Bound(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.json")
	if err := os.WriteFile(path, []byte("12345678"), 0o600); err != nil {
		t.Fatal(err)
	}
	when := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	if err := os.Chtimes(path, when, when); err != nil {
		t.Fatal(err)
	}
	b, mtime, err := ReadBounded(path, 8)
	if err != nil || string(b) != "12345678" || !mtime.Equal(when) {
		t.Errorf("ReadBounded(8 bytes, bound 8) = %q, %v, %v; want the bytes and %v", b, mtime, err, when)
	}
	if _, _, err := ReadBounded(path, 7); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReadBounded(8 bytes, bound 7) = %v, want ErrTooLarge", err)
	}
	if _, _, err := ReadBounded(dir, 1<<10); !errors.Is(err, ErrNotRegular) {
		t.Errorf("ReadBounded(folder) = %v, want ErrNotRegular", err)
	}
	if _, _, err := ReadBounded(filepath.Join(dir, "missing"), 8); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadBounded(missing) = %v, want ErrNotExist", err)
	}
}

// TestSymlink_NeverFollowed: ReadBounded, OpenLock, WriteNew, create,
// TouchIf and OpenOutput each refuse a symlink and leave its target as it
// was.
func TestSymlink_NeverFollowed(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	os.Chtimes(target, old, old)
	link := filepath.Join(dir, "link")
	symlinkOrSkip(t, target, link)

	if _, _, err := ReadBounded(link, 1<<10); !errors.Is(err, ErrSymlink) {
		t.Errorf("ReadBounded(link) = %v, want ErrSymlink", err)
	}
	if h, err := OpenLock(link); !errors.Is(err, ErrSymlink) {
		if err == nil {
			Close(h)
		}
		t.Errorf("OpenLock(link) = %v, want ErrSymlink", err)
	}
	if err := WriteNew(link, []byte("new")); err == nil {
		t.Errorf("WriteNew(link) wrote through it")
	}
	if f, err := create(link); !errors.Is(err, ErrSymlink) {
		if err == nil {
			f.Close()
		}
		t.Errorf("Create(link) = %v, want ErrSymlink", err)
	}
	if ok, err := TouchIf(link, 1<<10, time.Now(), func([]byte) bool { return true }); ok || !errors.Is(err, ErrSymlink) {
		t.Errorf("TouchIf(link) = %v, %v, want ErrSymlink", ok, err)
	}
	var he *HostileError
	if f, _, err := OpenOutput(link, true); !errors.As(err, &he) || !errors.Is(err, ErrSymlink) {
		if err == nil {
			f.Close()
		}
		t.Errorf("OpenOutput(link) = %v, want a *HostileError of ErrSymlink", err)
	}
	fi, err := os.Stat(target)
	if b, _ := os.ReadFile(target); string(b) != "keep" || err != nil || !fi.ModTime().Equal(old) {
		t.Errorf("the symlink's target changed: %q, mtime %v", b, fi.ModTime())
	}
}

// TestWriteNew_NeverReplaces: WriteNew creates a file and fails on one
// already there, leaving it as it was.
func TestWriteNew_NeverReplaces(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.json")
	if err := WriteNew(path, []byte("first")); err != nil {
		t.Fatal(err)
	}
	if err := WriteNew(path, []byte("second")); !errors.Is(err, os.ErrExist) {
		t.Errorf("WriteNew over a file = %v, want ErrExist", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "first" {
		t.Errorf("the file holds %q, want first", b)
	}
}

// TestTouchIf_OnlyWhatKeepApproves: the mtime moves only when keep approves
// the content it is given, which is the file's.
func TestTouchIf_OnlyWhatKeepApproves(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.json")
	os.WriteFile(path, []byte("ours"), 0o600)
	old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	os.Chtimes(path, old, old)
	now := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	var seen string
	if ok, err := TouchIf(path, 1<<10, now, func(b []byte) bool { seen = string(b); return false }); ok || err != nil {
		t.Errorf("TouchIf(refused) = %v, %v", ok, err)
	}
	if fi, _ := os.Stat(path); seen != "ours" || !fi.ModTime().Equal(old) {
		t.Errorf("refused: keep saw %q, mtime %v, want ours and %v", seen, fi.ModTime(), old)
	}
	if ok, err := TouchIf(path, 1<<10, now, func([]byte) bool { return true }); !ok || err != nil {
		t.Errorf("TouchIf(approved) = %v, %v", ok, err)
	}
	if fi, _ := os.Stat(path); !fi.ModTime().Equal(now) {
		t.Errorf("approved: mtime %v, want %v", fi.ModTime(), now)
	}
	if ok, err := TouchIf(path, 2, now, func([]byte) bool { return true }); ok || !errors.Is(err, ErrTooLarge) {
		t.Errorf("TouchIf over the bound = %v, %v, want ErrTooLarge", ok, err)
	}
}

// TestTryLock_SecondOpenIsBusy: a lock file held through one open is busy
// through another, and free once the first is closed.
func TestTryLock_SecondOpenIsBusy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.lock")
	a, err := OpenLock(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := TryLock(a); err != nil {
		t.Fatalf("TryLock(first) = %v", err)
	}
	b, err := OpenLock(path)
	if err != nil {
		t.Fatal(err)
	}
	defer Close(b)
	if !SameFile(b, path) {
		t.Errorf("SameFile(second open, its path) = false")
	}
	if err := TryLock(b); !errors.Is(err, ErrBusy) {
		t.Errorf("TryLock(second) = %v, want ErrBusy", err)
	}
	Close(a)
	if err := TryLock(b); err != nil {
		t.Errorf("TryLock(second) after the first closed = %v", err)
	}
}
