package marker

import (
	"errors"

	"golang.org/x/sys/unix"

	"github.com/padrun/padrun/marker/ident"
)

// lockHolder reads /proc/locks for a flock on the lock file. Inodes are
// matched without the device: overlay filesystems report the device of the
// layer below, and a false "held" only errs on the safe side.
func lockHolder(path string) (held bool, pid int, err error) {
	var st unix.Stat_t
	switch err := unix.Lstat(path, &st); {
	case err == unix.ENOENT:
		return false, 0, nil
	case err != nil:
		return false, 0, err
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return false, 0, errors.New(path + " is not a regular file")
	}
	pid, held, err = ident.FlockHolder(st.Ino)
	return held, pid, err
}
