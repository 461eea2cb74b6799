package marker

import (
	"os"
	"strconv"
	"strings"

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
	var st unix.Stat_t
	if unix.Fstatfs(h, &sfs) != nil || unix.Fstat(h, &st) != nil {
		return false, ""
	}
	return scope(sfs, st)
}

// pathScope is flockScope for the folder dir, for readers that do not open
// the lock file.
func pathScope(dir string) (localOnly bool, fs string) {
	var sfs unix.Statfs_t
	var st unix.Stat_t
	if unix.Statfs(dir, &sfs) != nil || unix.Stat(dir, &st) != nil {
		return false, ""
	}
	return scope(sfs, st)
}

func scope(sfs unix.Statfs_t, st unix.Stat_t) (localOnly bool, fs string) {
	switch uint32(sfs.Type) {
	case fuseSuperMagic, v9fsMagic:
		m, ok := mountOf(st)
		if !ok {
			m.FSType = "fuse"
			if uint32(sfs.Type) == v9fsMagic {
				m.FSType = "9p"
			}
		}
		return true, m.FSType
	case nfsSuperMagic, smbSuperMagic, cifsMagic:
		m, ok := mountOf(st)
		return ok && m.LocalOnly(), m.FSType
	}
	return false, ""
}

// mountOf finds the mount that holds the file of st.
func mountOf(st unix.Stat_t) (mount, bool) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return mount{}, false
	}
	return parseMountinfo(string(b), unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev)))
}

// parseMountinfo finds the mount of device major:minor in the text of
// /proc/self/mountinfo. A device mounted more than once (bind mounts) has
// one superblock, so the last entry serves.
func parseMountinfo(text string, major, minor uint32) (mount, bool) {
	dev := strconv.FormatUint(uint64(major), 10) + ":" + strconv.FormatUint(uint64(minor), 10)
	var found mount
	ok := false
	for _, line := range strings.Split(text, "\n") {
		// 36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
		pre, post, cut := strings.Cut(line, " - ")
		f := strings.Fields(pre)
		if !cut || len(f) < 6 || f[2] != dev {
			continue
		}
		g := strings.Fields(post)
		if len(g) < 1 {
			continue
		}
		found = mount{FSType: g[0], Options: strings.Split(f[5], ",")}
		if len(g) >= 3 {
			found.Options = append(found.Options, strings.Split(g[2], ",")...)
		}
		ok = true
	}
	return found, ok
}

// mount is what decides whether a flock reaches other machines: a mount's
// filesystem type (mountinfo's, with its subtype: "fuse.sshfs") and its
// superblock and mount options.
type mount struct {
	FSType  string
	Options []string
}

// LocalOnly reports whether a flock taken on this mount is seen only by
// this kernel, never by the other machines that mount the same folder: FUSE
// (sshfs, bindfs, rclone, virtiofs, ...), NFS mounted with nolock or
// local_lock=flock|all, SMB mounted with nobrl, and 9p.
func (m mount) LocalOnly() bool {
	fstype, _, _ := strings.Cut(m.FSType, ".")
	switch fstype {
	case "fuse", "fuseblk", "virtiofs", "9p":
		return true
	case "nfs", "nfs4":
		return m.has("nolock") || m.has("local_lock=flock") || m.has("local_lock=all")
	case "cifs", "smb3":
		return m.has("nobrl")
	}
	return false
}

func (m mount) has(opt string) bool {
	for _, o := range m.Options {
		if o == opt {
			return true
		}
	}
	return false
}
