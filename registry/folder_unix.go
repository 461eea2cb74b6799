//go:build unix

package registry

import (
	"fmt"
	"os"
	"syscall"
)

// checkFolder applies the folder rules to an existing folder (see Open).
func checkFolder(dir string, fi os.FileInfo, isDefault bool) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return &FolderError{dir, "cannot be examined"}
	}
	uid := os.Geteuid()
	own := int(st.Uid) == uid
	perm := fi.Mode().Perm()
	mode := fmt.Sprintf("%04o", uint32(perm)|specialBits(fi.Mode()))
	switch {
	case isDefault && own && (perm != 0o700 || fi.Mode()&(os.ModeSticky|os.ModeSetgid|os.ModeSetuid) != 0):
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("registry: tighten %s: %w", dir, err)
		}
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
