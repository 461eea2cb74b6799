//go:build unix

package marker

import (
	"errors"

	"golang.org/x/sys/unix"

	"github.com/padrun/padrun/marker/safefile"
)

// inodeKey names an inode.
type inodeKey struct{ dev, ino uint64 }

// errSymlinkInode says the session file's name is a symlink.
var errSymlinkInode = errors.New("marker: session file is a symlink")

// openInode opens the session file at path as a file another user may
// have planted: for reading only, without following a symlink, blocking
// on a FIFO or becoming its terminal. It is never written through.

func openInode(path string) (int, inodeKey, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	switch err {
	case nil:
	case unix.ELOOP:
		return -1, inodeKey{}, errSymlinkInode
	case unix.ENOENT, unix.ENOTDIR, unix.EACCES, unix.EPERM, unix.ENXIO:
		return -1, inodeKey{}, errNoInode
	default:
		return -1, inodeKey{}, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return -1, inodeKey{}, errNoInode
	}
	return fd, inodeKey{uint64(st.Dev), st.Ino}, nil
}

// lockInode flocks fd without waiting. A flock the filesystem refuses
// (none at all, or NFS, which emulates it with a write lock that a
// read-only descriptor cannot take) leaves the file to its name's lock.
func lockInode(fd int) error {
	switch err := safefile.TryLock(fd); err {
	case nil:
		return nil
	case safefile.ErrBusy:
		return errInodeBusy
	default:
		return errNoInode
	}
}

func closeInode(fd int) { unix.Close(fd) }

// unlinked reports whether the open file h has no name left.
func unlinked(h safefile.Handle) bool {
	var st unix.Stat_t
	return unix.Fstat(h, &st) == nil && st.Nlink == 0
}

// inodeUnlinked reports whether the held inode fd has no name left.
func inodeUnlinked(fd int) bool { return unlinked(fd) }

// sameInode reports whether path names the inode key.
func sameInode(path string, key inodeKey) bool {
	var st unix.Stat_t
	return unix.Stat(path, &st) == nil && (inodeKey{uint64(st.Dev), st.Ino}) == key
}
