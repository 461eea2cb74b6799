//go:build unix

package safefile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// within fails the test when f has not returned in a minute: a call that
// should not wait (a FIFO without a writer) blocks otherwise for ever.
// unblock ends the wait so that the call can return after a failure.
func within(t *testing.T, what string, unblock func(), f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		unblock()
		<-done
		t.Fatalf("%s blocked", what)
	}
}

// fifo makes a FIFO and returns its path and a func that opens its other
// end, which releases an open of it that waits.
func fifo(t *testing.T, dir string) (string, func()) {
	t.Helper()
	path := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, func() {
		if f, err := os.OpenFile(path, os.O_RDWR, 0); err == nil {
			f.Close()
		}
	}
}

// TestFIFO_RefusedWithoutWaiting: a FIFO that no one writes or reads is
// refused as ErrNotRegular at once (O_NONBLOCK) by every open that reads,
// writes or locks, and a device by every read.
func TestFIFO_RefusedWithoutWaiting(t *testing.T) {
	path, unblock := fifo(t, t.TempDir())
	within(t, "ReadBounded(fifo)", unblock, func() {
		if _, _, err := ReadBounded(path, 1<<10); !errors.Is(err, ErrNotRegular) {
			t.Errorf("ReadBounded(fifo) = %v, want ErrNotRegular", err)
		}
	})
	within(t, "TouchIf(fifo)", unblock, func() {
		if ok, err := TouchIf(path, 1<<10, time.Now(), func([]byte) bool { return true }); ok || !errors.Is(err, ErrNotRegular) {
			t.Errorf("TouchIf(fifo) = %v, %v, want ErrNotRegular", ok, err)
		}
	})
	within(t, "OpenLock(fifo)", unblock, func() {
		if h, err := OpenLock(path); !errors.Is(err, ErrNotRegular) {
			if err == nil {
				Close(h)
			}
			t.Errorf("OpenLock(fifo) = %v, want ErrNotRegular", err)
		}
	})
	within(t, "OpenTrusted(fifo)", unblock, func() {
		if f, err := OpenTrusted(path, 1<<10); !errors.Is(err, ErrNotRegular) {
			if err == nil {
				f.Close()
			}
			t.Errorf("OpenTrusted(fifo) = %v, want ErrNotRegular", err)
		}
	})
	within(t, "OpenOutput(fifo)", unblock, func() {
		if f, _, err := OpenOutput(path, false); !errors.Is(err, ErrNotRegular) {
			if err == nil {
				f.Close()
			}
			t.Errorf("OpenOutput(fifo) = %v, want ErrNotRegular", err)
		}
	})
	if _, _, err := ReadBounded(os.DevNull, 1<<10); !errors.Is(err, ErrNotRegular) {
		t.Errorf("ReadBounded(%s) = %v, want ErrNotRegular", os.DevNull, err)
	}
}

// TestCreatedFiles_Mode0600: a lock file, a file written new and one
// created are readable by their owner only, whatever the umask lets
// through.
func TestCreatedFiles_Mode0600(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	dir := t.TempDir()
	h, err := OpenLock(filepath.Join(dir, "s.lock"))
	if err != nil {
		t.Fatal(err)
	}
	Close(h)
	if err := WriteNew(filepath.Join(dir, "m.json"), []byte("{}")); err != nil {
		t.Fatal(err)
	}
	f, err := create(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, name := range []string{"s.lock", "m.json", "out"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, %v; want 0600", name, fi.Mode().Perm(), err)
		}
	}
}

// TestSameFile_Replaced: a lock file whose path now names another file,
// or nothing, is not the same file.
func TestSameFile_Replaced(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.lock")
	h, err := OpenLock(path)
	if err != nil {
		t.Fatal(err)
	}
	defer Close(h)
	os.Remove(path)
	if SameFile(h, path) {
		t.Errorf("SameFile after the path was removed = true")
	}
	os.WriteFile(path, nil, 0o600)
	if SameFile(h, path) {
		t.Errorf("SameFile after the path was replaced = true")
	}
}

// TestOtherOwner_Refused: a file of another user is not trusted for reading
// and not written as output, and is left as it was.
func TestOtherOwner_Refused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making a file of another user needs root (chown)")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "theirs")
	if err := os.WriteFile(path, []byte("agent_name = \"mallory\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	var he *HostileError
	if _, err := ReadTrusted(path, 1<<10); !errors.As(err, &he) {
		t.Errorf("ReadTrusted(another user's file) = %v, want a *HostileError", err)
	}
	if f, _, err := OpenOutput(path, true); !errors.As(err, &he) {
		if err == nil {
			f.Close()
		}
		t.Errorf("OpenOutput(another user's file) = %v, want a *HostileError", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "agent_name = \"mallory\"\n" {
		t.Errorf("a refused open changed the file: %q", b)
	}
}
