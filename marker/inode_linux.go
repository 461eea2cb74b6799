package marker

import (
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/padrun/padrun/marker/ident"
)

// fdPath is the name the open file fd has now, as /proc shows it: it
// follows renames of the file and of its folders. ok is false when it
// cannot be read or the file was deleted.
func fdPath(fd int) (string, bool) {
	p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil || !strings.HasPrefix(p, "/") || strings.HasSuffix(p, " (deleted)") {
		return "", false
	}
	return p, true
}

// fdContents is where the contents of the open file fd can be read by
// its owner, also once it is deleted.
func fdContents(fd int) string {
	return "/proc/" + strconv.Itoa(os.Getpid()) + "/fd/" + strconv.Itoa(fd)
}

// inodeHolder finds who holds the inode key of file: the pid that
// /proc/locks names, and, where it shows, the marker of the session it
// belongs to, through a lock file that the holder (or a process that has
// the file open, which inherited the lock) has open, and that lock file's
// session file: the one that is still this inode, else the first. It reads
// and never locks.
func inodeHolder(file string, key inodeKey) (m *Marker, at string, pid int) {
	pid, _, _ = ident.FlockHolder(key.ino)
	cands := ident.LockHolders(file)
	if pid > 0 {
		cands = append([]int{pid}, slices.DeleteFunc(cands, func(c int) bool { return c == pid })...)
	}
	for _, c := range cands {
		dir := "/proc/" + strconv.Itoa(c) + "/fd/"
		des, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, de := range des {
			p, err := os.Readlink(dir + de.Name())
			if err != nil || !strings.HasSuffix(p, lockSuffix) {
				continue
			}
			f := strings.TrimSuffix(p, lockSuffix)
			mk, err := Read(f)
			if err != nil {
				continue
			}
			if sameInode(f, key) {
				return mk, f, c
			}
			if m == nil {
				m, at = mk, f
			}
		}
		if m != nil {
			return m, at, c
		}
	}
	return nil, "", pid
}

// inodeLockHolder is the holder of the session file's own inode, from
// /proc/locks, for readers that take no lock (status); nil when it is not
// held.
func inodeLockHolder(file string, self ident.Self) *HeldError {
	var st unix.Stat_t
	if unix.Stat(file, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil
	}
	if _, held, err := ident.FlockHolder(st.Ino); err != nil || !held {
		return nil
	}
	return inodeHeld(file, inodeKey{uint64(st.Dev), st.Ino}, self)
}
