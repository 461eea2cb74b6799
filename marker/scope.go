package marker

import (
	"strings"
)

// Mount is what decides whether a flock reaches other machines: a mount's
// filesystem type (mountinfo's, with its subtype: "fuse.sshfs") and its
// superblock and mount options.
type Mount struct {
	FSType  string
	Options []string
}

// LocalOnly reports whether a flock taken on this mount is seen only by
// this kernel, never by the other machines that mount the same folder: FUSE
// (sshfs, bindfs, rclone, virtiofs, ...), NFS mounted with nolock or
// local_lock=flock|all, SMB mounted with nobrl, and 9p.
func (m Mount) LocalOnly() bool {
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

func (m Mount) has(opt string) bool {
	for _, o := range m.Options {
		if o == opt {
			return true
		}
	}
	return false
}
