package marker

import (
	"os"

	"golang.org/x/sys/unix"

	"github.com/padrun/padrun/marker/safefile"
)

// Filesystem magic numbers of statfs(2) whose flock stays on this kernel.
const (
	fuseSuperMagic = 0x65735546
	v9fsMagic      = 0x01021997
	nfsSuperMagic  = 0x6969
	smbSuperMagic  = 0xfe534d42 // SMB2_SUPER_MAGIC (cifs)
	cifsMagic      = 0xff534d42
)

// flockScope tells whether the flock on the open lock file reaches only
// this machine, and names the filesystem. statfs decides FUSE and 9p at
// once; NFS and SMB depend on their mount options, read from
// /proc/self/mountinfo for the mount holding the file. When those cannot
// be read, an NFS or SMB flock is taken to reach the server, as it does by
// default.
func flockScope(h safefile.Handle) (localOnly bool, fs string) {
	var sfs unix.Statfs_t
	if err := unix.Fstatfs(h, &sfs); err != nil {
		return false, ""
	}
	switch uint32(sfs.Type) {
	case fuseSuperMagic, v9fsMagic:
		m, ok := mountOf(h)
		if !ok {
			m.FSType = "fuse"
			if uint32(sfs.Type) == v9fsMagic {
				m.FSType = "9p"
			}
		}
		return true, m.FSType
	case nfsSuperMagic, smbSuperMagic, cifsMagic:
		m, ok := mountOf(h)
		return ok && m.LocalOnly(), m.FSType
	}
	return false, ""
}

// mountOf finds the mount that holds the open file h.
func mountOf(h safefile.Handle) (Mount, bool) {
	var st unix.Stat_t
	if err := unix.Fstat(h, &st); err != nil {
		return Mount{}, false
	}
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return Mount{}, false
	}
	return parseMountinfo(string(b), unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev)))
}
