//go:build unix

package safefile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"syscall"

	"golang.org/x/sys/unix"
)

// OpenTrusted opens a file that another user could have planted for
// reading, like os.Open, but never through a symlink, never blocking (a
// FIFO, device or socket is a *HostileError at once), and only when it is a
// regular file of at most max bytes owned by the user or root. A missing
// file is an error that errors.Is(err, fs.ErrNotExist) reports.
func OpenTrusted(path string, max int64) (*os.File, error) {
	fd, err := openRead(path)
	switch {
	case errors.Is(err, ErrSymlink):
		return nil, symlink(path)
	case err != nil:
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if err := trusted(path, fi, max); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ReadTrusted reads a file that another user could have planted, like
// os.ReadFile, with OpenTrusted's rules.
func ReadTrusted(path string, max int64) ([]byte, error) {
	f, err := OpenTrusted(path, max)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, tooLarge(path, max) // it grew since it was examined
	}
	return b, nil
}

// trusted applies OpenTrusted's rules to an open file's info.
func trusted(path string, fi os.FileInfo, max int64) error {
	if !fi.Mode().IsRegular() {
		return notRegular(path, fi.Mode())
	}
	if fi.Size() > max {
		return tooLarge(path, max)
	}
	if uid := ownerOf(fi); uid != os.Geteuid() && uid != 0 {
		return &HostileError{Path: path, Why: fmt.Sprintf("is owned by uid %d, not by you (uid %d) or root: padrun will not trust it", uid, os.Geteuid())}
	}
	return nil
}

func ownerOf(fi os.FileInfo) int {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid)
	}
	return -1
}

// OpenOutput opens path for padrun's own output (a log, a record of the
// session), like os.OpenFile with O_WRONLY|O_CREATE and mode 0600, but
// never through a symlink and never blocking. A missing file is created
// exclusively; an existing one must be the user's own regular file with one
// name (a second name may be anyone's file), else it is a *HostileError and
// left as it was. trunc empties it once it passed, else writes append.
// created says the file is a new one.
func OpenOutput(path string, trunc bool) (f *os.File, created bool, err error) {
	flags := unix.O_WRONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_NOCTTY | unix.O_CLOEXEC
	if !trunc {
		flags |= unix.O_APPEND
	}
	for range 8 { // each round loses only to a file created or removed meanwhile
		if fi, err := os.Lstat(path); err == nil {
			if err := ownOutput(path, fi); err != nil {
				return nil, false, err // refused before it is even opened
			}
		}
		fd, err := unix.Open(path, flags, 0)
		created := false
		if err == unix.ENOENT {
			fd, err = unix.Open(path, flags|unix.O_CREAT|unix.O_EXCL, 0o600)
			if err == unix.EEXIST {
				continue
			}
			created = true
		}
		switch err {
		case nil:
		case unix.ENOENT:
			continue
		case unix.ELOOP:
			return nil, false, symlink(path)
		case unix.ENXIO, unix.EISDIR:
			fi, lerr := os.Lstat(path)
			if lerr == nil {
				return nil, false, notRegular(path, fi.Mode())
			}
			return nil, false, &HostileError{path, "is not a regular file", ErrNotRegular}
		default:
			return nil, false, &os.PathError{Op: "open", Path: path, Err: err}
		}
		f = os.NewFile(uintptr(fd), path)
		fi, err := f.Stat()
		if err == nil {
			err = ownOutput(path, fi)
		}
		if err == nil && trunc && !created {
			err = f.Truncate(0)
		}
		if err != nil {
			f.Close()
			if created {
				os.Remove(path) // Best effort: ours, made a moment ago.
			}
			return nil, false, err
		}
		return f, created, nil
	}
	return nil, false, &HostileError{Path: path, Why: "keeps being created and removed: padrun will not write there"}
}

// ownOutput applies OpenOutput's rules to an existing file's info.
func ownOutput(path string, fi os.FileInfo) error {
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		return symlink(path)
	case !fi.Mode().IsRegular():
		return notRegular(path, fi.Mode())
	}
	if uid := ownerOf(fi); uid != os.Geteuid() {
		return &HostileError{Path: path, Why: fmt.Sprintf("is owned by uid %d, not by you (uid %d): padrun writes only to a file of yours", uid, os.Geteuid())}
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
		return &HostileError{Path: path, Why: fmt.Sprintf("has %d names (hard links): padrun will not write to a file it may know by another name", st.Nlink)}
	}
	return nil
}

// TrustedProgram checks a program padrun runs with the user's rights (a
// helper beside padrun): it and its folder are owned by the user or root,
// and writable by neither group nor others (docs/spec.md §14). The program is
// a regular file, not a symlink.
func TrustedProgram(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return notRegular(path, fi.Mode())
	}
	if err := ownedAndClosed(path, fi); err != nil {
		return err
	}
	dir := filepath.Dir(path)
	di, err := os.Stat(dir)
	if err != nil {
		return err
	}
	return ownedAndClosed(dir, di)
}

// ownedAndClosed is the owner rule: the user's or root's, and writable by
// no one else.
func ownedAndClosed(path string, fi os.FileInfo) error {
	if uid := ownerOf(fi); uid != os.Geteuid() && uid != 0 {
		return &HostileError{Path: path, Why: fmt.Sprintf("is owned by uid %d, not by you (uid %d) or root: padrun will not run it", uid, os.Geteuid())}
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return &HostileError{Path: path, Why: fmt.Sprintf("is writable by others (mode %04o): padrun will not run it", fi.Mode().Perm())}
	}
	return nil
}
