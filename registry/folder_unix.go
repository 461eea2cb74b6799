//go:build unix

package registry

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// checkFolder applies the folder rules to an existing folder (see Open):
// mayTighten is the default folder, named without a symlink.
func checkFolder(dir string, fi os.FileInfo, isDefault, mayTighten bool) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return &FolderError{dir, "cannot be examined"}
	}
	uid := os.Geteuid()
	own := int(st.Uid) == uid
	perm := fi.Mode().Perm()
	mode := fmt.Sprintf("%04o", uint32(perm)|specialBits(fi.Mode()))
	switch {
	case mayTighten && own && (perm != 0o700 || fi.Mode()&(os.ModeSticky|os.ModeSetgid|os.ModeSetuid) != 0):
		return tighten(dir, st)
	case !isDefault && !own:
		return &FolderError{dir, fmt.Sprintf("is owned by uid %d, not by you (uid %d)", st.Uid, uid)}
	case perm&0o022 != 0:
		return &FolderError{dir, "is writable by group or others (mode " + mode + ")"}
	}
	return nil
}

// specialBits are the setuid, setgid and sticky bits of m as chmod(1) writes them.
func specialBits(m os.FileMode) uint32 {
	var b uint32
	if m&os.ModeSetuid != 0 {
		b |= 0o4000
	}
	if m&os.ModeSetgid != 0 {
		b |= 0o2000
	}
	if m&os.ModeSticky != 0 {
		b |= 0o1000
	}
	return b
}

// tighten chmods dir 0700 through a descriptor opened without following a
// symlink, once it proved to be the folder examined as st: a symlink put
// there meanwhile is never followed to another folder.
func tighten(dir string, st *syscall.Stat_t) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return &FolderError{dir, "could not be opened to tighten it: " + err.Error()}
	}
	defer unix.Close(fd)
	var now unix.Stat_t
	if err := unix.Fstat(fd, &now); err != nil || uint64(now.Dev) != uint64(st.Dev) || uint64(now.Ino) != uint64(st.Ino) {
		return &FolderError{dir, "was replaced while padrun examined it"}
	}
	if err := unix.Fchmod(fd, 0o700); err != nil {
		return fmt.Errorf("registry: tighten %s: %w", dir, err)
	}
	return nil
}
