package safefile

import (
	"io"
	"os"
	"time"

	"golang.org/x/sys/windows"
)

// Handle is an open lock file.
type Handle = *os.File

// OpenLock opens or creates a lock file, refusing anything but a regular file.
func OpenLock(path string) (Handle, error) {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSymlink != 0 {
			return nil, ErrSymlink
		}
		if !fi.Mode().IsRegular() {
			return nil, ErrNotRegular
		}
	}
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
}

// TryLock takes an exclusive lock without waiting: ErrBusy when held.
func TryLock(f Handle) error {
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, new(windows.Overlapped))
	if err == windows.ERROR_LOCK_VIOLATION {
		return ErrBusy
	}
	return err
}

// Lock takes an exclusive lock, waiting for it.
func Lock(f Handle) error {
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, new(windows.Overlapped))
}

// Close closes a lock file, dropping its lock.
func Close(f Handle) { f.Close() }

// SameFile is always true on Windows: an open file cannot be unlinked, so
// lock files are never removed there.
func SameFile(Handle, string) bool { return true }

// ReadBounded reads a regular file of at most max bytes and its mtime.
func ReadBounded(path string, max int64) ([]byte, time.Time, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, time.Time{}, err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return nil, time.Time{}, ErrSymlink
	}
	if !fi.Mode().IsRegular() {
		return nil, time.Time{}, ErrNotRegular
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, time.Time{}, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, time.Time{}, err
	}
	if int64(len(b)) > max {
		return nil, time.Time{}, ErrTooLarge
	}
	return b, fi.ModTime(), nil
}

// WriteNew creates path with b, failing if anything is already there.
func WriteNew(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	return f.Close()
}

// Touch sets path's mtime.
func Touch(path string, t time.Time) error { return os.Chtimes(path, t, t) }

// TouchIf sets path's mtime if keep approves its content (at most max
// bytes), and reports whether it did. Here the file is touched by name
// again after the read.
func TouchIf(path string, max int64, t time.Time, keep func([]byte) bool) (bool, error) {
	b, _, err := ReadBounded(path, max)
	if err != nil || !keep(b) {
		return false, err
	}
	return true, os.Chtimes(path, t, t)
}

// create creates or truncates path, refusing a symlink.
func create(path string) (*os.File, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return nil, ErrSymlink
	}
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
}

// Fd is the handle's system handle.
func Fd(h Handle) uintptr { return h.Fd() }
