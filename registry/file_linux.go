//go:build linux

package registry

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// readRecordFile reads a registry file as pad does: without following a
// symlink or blocking on a FIFO, regular files only, at most MaxSize bytes.
// A regular file that cannot be read still returns its info, so that its
// mtime can stand for its time. Four system calls (open, fstat, read,
// close), no os.File: `ls` reads every record.
func readRecordFile(path string) (recordFile, error) {
	fd, err := openNoFollow(path)
	if err != nil {
		return unreadable(path, err)
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := fstat(fd, &st); err != nil {
		return unreadable(path, &fs.PathError{Op: "stat", Path: path, Err: err})
	}
	fi := &statInfo{name: filepath.Base(path), st: st}
	if !fi.Mode().IsRegular() {
		return recordFile{}, errNotRecord
	}
	rf := recordFile{info: fi}
	if st.Size > MaxSize {
		return rf, errTooLarge
	}
	// Its size and one byte more, in one read: a regular file's read
	// short of the buffer is its end. One that fills it means the file grew
	// meanwhile, and it is read on, up to the bound.
	b := make([]byte, st.Size+1)
	n := 0
	for {
		m, err := read(fd, b[n:])
		if err != nil {
			return rf, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n += m; n > MaxSize {
			return rf, errTooLarge
		}
		if m == 0 || n < len(b) {
			rf.data = b[:n]
			return rf, nil
		}
		b = append(b, make([]byte, min(len(b), MaxSize+1-n))...)
	}
}

// openNoFollow opens path for reading, never through a symlink and
// without blocking on a FIFO: either is errNotRecord.
func openNoFollow(path string) (int, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		switch err {
		case nil:
			return fd, nil
		case syscall.EINTR:
			continue
		case syscall.ENOENT, syscall.ELOOP, syscall.ENXIO:
			return -1, errNotRecord
		}
		return -1, &fs.PathError{Op: "open", Path: path, Err: err}
	}
}

func fstat(fd int, st *syscall.Stat_t) error {
	for {
		if err := syscall.Fstat(fd, st); err != syscall.EINTR {
			return err
		}
	}
}

func read(fd int, b []byte) (int, error) {
	for {
		n, err := syscall.Read(fd, b)
		if err != syscall.EINTR {
			return n, err
		}
	}
}

// statInfo is an fstat's result as an os.FileInfo.
type statInfo struct {
	name string
	st   syscall.Stat_t
}

func (fi *statInfo) Name() string       { return fi.name }
func (fi *statInfo) Size() int64        { return fi.st.Size }
func (fi *statInfo) ModTime() time.Time { return time.Unix(fi.st.Mtim.Unix()) }
func (fi *statInfo) IsDir() bool        { return fi.Mode().IsDir() }
func (fi *statInfo) Sys() any           { return &fi.st }

// Mode is the file's type and permission bits, as os.Stat gives them.
func (fi *statInfo) Mode() fs.FileMode {
	m := fs.FileMode(fi.st.Mode & 0o777)
	switch fi.st.Mode & syscall.S_IFMT {
	case syscall.S_IFREG:
	case syscall.S_IFDIR:
		m |= fs.ModeDir
	case syscall.S_IFLNK:
		m |= fs.ModeSymlink
	case syscall.S_IFIFO:
		m |= fs.ModeNamedPipe
	case syscall.S_IFSOCK:
		m |= fs.ModeSocket
	case syscall.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFBLK:
		m |= fs.ModeDevice
	default:
		m |= fs.ModeIrregular
	}
	return m
}

// sameFile reports whether a and b describe the same file: its inode on
// its device.
func sameFile(a, b os.FileInfo) bool {
	ia, da, ok1 := statIdentity(a)
	ib, db, ok2 := statIdentity(b)
	return ok1 && ok2 && ia == ib && da == db
}
