//go:build unix

package safefile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestOpenTrusted_FIFOSymlinkFolder_RefusedAtOnce: a FIFO that no one
// writes, a symlink and a folder are each refused without a wait, by what
// they are; a regular file of the user's is read; one over the bound is not.
func TestOpenTrusted_FIFOSymlinkFolder_RefusedAtOnce(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("agent_name = \"wren\"\n"), 0o600)
	link := filepath.Join(dir, "link")
	os.Symlink(file, link)
	for path, want := range map[string]error{fifo: ErrNotRegular, link: ErrSymlink, dir: ErrNotRegular} {
		var he *HostileError
		if _, err := ReadTrusted(path, 1<<10); !errors.Is(err, want) || !errors.As(err, &he) {
			t.Errorf("ReadTrusted(%s) = %v, want %v as a *HostileError", filepath.Base(path), err, want)
		}
	}
	if b, err := ReadTrusted(file, 1<<10); err != nil || string(b) != "agent_name = \"wren\"\n" {
		t.Errorf("ReadTrusted(file) = %q, %v", b, err)
	}
	if _, err := ReadTrusted(file, 4); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReadTrusted over the bound = %v, want ErrTooLarge", err)
	}
	if _, err := ReadTrusted(filepath.Join(dir, "missing"), 1<<10); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadTrusted(missing) = %v, want ErrNotExist", err)
	}
}

// TestOpenOutput_OwnFileOnly: a new file is created 0600; an existing one
// of the user's is appended to or truncated; a symlink, a FIFO, a folder
// and a file with a second name are refused and left as they were.
func TestOpenOutput_OwnFileOnly(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.log")
	f, created, err := OpenOutput(path, false)
	if err != nil || !created {
		t.Fatalf("OpenOutput(new) = %v, created %v", err, created)
	}
	f.WriteString("one\n")
	f.Close()
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("new file has mode %v, want 0600", fi.Mode().Perm())
	}
	f, created, err = OpenOutput(path, false)
	if err != nil || created {
		t.Fatalf("OpenOutput(own, append) = %v, created %v", err, created)
	}
	f.WriteString("two\n")
	f.Close()
	if b, _ := os.ReadFile(path); string(b) != "one\ntwo\n" {
		t.Errorf("append: %q", b)
	}
	f, _, err = OpenOutput(path, true)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if b, _ := os.ReadFile(path); len(b) != 0 {
		t.Errorf("trunc: %q left", b)
	}

	os.WriteFile(path, []byte("keep"), 0o600)
	link := filepath.Join(dir, "link")
	os.Symlink(path, link)
	fifo := filepath.Join(dir, "fifo")
	syscall.Mkfifo(fifo, 0o600)
	hard := filepath.Join(dir, "hard")
	os.Link(path, hard)
	for _, p := range []string{link, fifo, dir, hard} {
		var he *HostileError
		if _, _, err := OpenOutput(p, true); !errors.As(err, &he) {
			t.Errorf("OpenOutput(%s) = %v, want a *HostileError", filepath.Base(p), err)
		}
	}
	if b, _ := os.ReadFile(path); string(b) != "keep" {
		t.Errorf("a refused open changed the file: %q", b)
	}
}
