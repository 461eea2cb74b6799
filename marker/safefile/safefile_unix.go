//go:build unix

package safefile

import (
	"errors"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// Handle is an open lock file.
type Handle = int

// OpenLock opens or creates (mode 0600) a lock file, like os.OpenFile with
// O_RDWR|O_CREATE, but refuses a symlink or anything but a regular file.
func OpenLock(path string) (Handle, error) {
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0o600)
	switch err {
	case nil:
	case unix.ELOOP:
		return -1, ErrSymlink
	case unix.ENXIO, unix.EISDIR:
		return -1, ErrNotRegular
	case unix.EACCES, unix.EPERM:
		// In a sticky folder, O_CREAT of another user's symlink or FIFO
		// is EACCES even with O_NOFOLLOW: say what is there, not that it
		// may not be opened.
		var st unix.Stat_t
		if unix.Lstat(path, &st) == nil {
			switch st.Mode & unix.S_IFMT {
			case unix.S_IFLNK:
				return -1, ErrSymlink
			case unix.S_IFREG:
			default:
				return -1, ErrNotRegular
			}
		}
		return -1, err
	default:
		return -1, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return -1, ErrNotRegular
	}
	return fd, nil
}

// TryLock takes an exclusive flock without waiting: ErrBusy when held.
func TryLock(fd Handle) error {
	switch err := flock(fd, unix.LOCK_EX|unix.LOCK_NB); err {
	case unix.EWOULDBLOCK:
		return ErrBusy
	case unix.ENOLCK, unix.EOPNOTSUPP:
		return ErrNoLocking
	default:
		return err
	}
}

// Lock takes an exclusive flock, waiting for it.
func Lock(fd Handle) error {
	switch err := flock(fd, unix.LOCK_EX); err {
	case unix.ENOLCK, unix.EOPNOTSUPP:
		return ErrNoLocking
	default:
		return err
	}
}

func flock(fd, how int) error {
	for {
		if err := unix.Flock(fd, how); err != unix.EINTR {
			return err
		}
	}
}

// Close closes a lock file, dropping its lock.
func Close(fd Handle) { unix.Close(fd) }

// SameFile reports whether path still names the file open as fd.
func SameFile(fd Handle, path string) bool {
	var a, b unix.Stat_t
	if unix.Fstat(fd, &a) != nil || unix.Lstat(path, &b) != nil {
		return false
	}
	return a.Dev == b.Dev && a.Ino == b.Ino
}

// ReadBounded reads a regular file of at most max bytes, like os.ReadFile,
// but without following a symlink or blocking on a FIFO. It also returns
// the file's mtime.
func ReadBounded(path string, max int64) ([]byte, time.Time, error) {
	fd, err := openRead(path)
	if err != nil {
		return nil, time.Time{}, err
	}
	defer unix.Close(fd)
	return readFD(fd, max)
}

// TouchIf sets the mtime of the regular file at path to t, like Touch, if
// keep approves its content (at most max bytes), and reports whether it
// did. The file touched is the one read, never one that replaced it since.
func TouchIf(path string, max int64, t time.Time, keep func([]byte) bool) (bool, error) {
	fd, err := openRead(path)
	if err != nil {
		return false, err
	}
	defer unix.Close(fd)
	b, _, err := readFD(fd, max)
	if err != nil || !keep(b) {
		return false, err
	}
	tv := unix.NsecToTimeval(t.UnixNano())
	return true, unix.Futimes(fd, []unix.Timeval{tv, tv})
}

func openRead(path string) (int, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err == unix.ELOOP {
		return -1, ErrSymlink
	}
	return fd, err
}

// readFD reads the open regular file fd, of at most max bytes, and its mtime.
func readFD(fd int, max int64) ([]byte, time.Time, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, time.Time{}, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, time.Time{}, ErrNotRegular
	}
	if st.Size > max {
		return nil, time.Time{}, ErrTooLarge
	}
	buf := make([]byte, st.Size+1) // one more: a file that grew is caught
	n := 0
	for n < len(buf) {
		k, err := unix.Read(fd, buf[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, time.Time{}, err
		}
		if k == 0 {
			break
		}
		n += k
	}
	if int64(n) > max {
		return nil, time.Time{}, ErrTooLarge
	}
	return buf[:n], time.Unix(st.Mtim.Unix()), nil
}

// WriteNew creates path with b, mode 0600, like os.WriteFile, but fails if
// anything, a symlink included, is already there.
func WriteNew(path string, b []byte) error {
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			unix.Close(fd)
			unix.Unlink(path)
			return err
		}
		b = b[n:]
	}
	if err := unix.Close(fd); err != nil {
		unix.Unlink(path)
		return err
	}
	return nil
}

// Touch sets path's mtime without following a symlink.
func Touch(path string, t time.Time) error {
	ts := unix.NsecToTimespec(t.UnixNano())
	return unix.UtimesNanoAt(unix.AT_FDCWD, path, []unix.Timespec{ts, ts}, unix.AT_SYMLINK_NOFOLLOW)
}

// create creates or truncates path, mode 0600, like os.Create, but never
// through a symlink.
func create(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if errors.Is(err, unix.ELOOP) {
		return nil, ErrSymlink
	}
	return f, err
}

// Fd is the handle's descriptor number.
func Fd(h Handle) uintptr { return uintptr(h) }
