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

// parseMountinfo finds the mount of device major:minor in the text of
// /proc/self/mountinfo. A device mounted more than once (bind mounts) has
// one superblock, so the last entry serves.
func parseMountinfo(text string, major, minor uint32) (Mount, bool) {
	dev := itoa(major) + ":" + itoa(minor)
	var found Mount
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
		found = Mount{FSType: g[0], Options: strings.Split(f[5], ",")}
		if len(g) >= 3 {
			found.Options = append(found.Options, strings.Split(g[2], ",")...)
		}
		ok = true
	}
	return found, ok
}

func itoa(n uint32) string {
	if n == 0 {
		return "0"
	}
	var b [10]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}
