package marker

import (
	"strings"
	"testing"
)

func TestMount_LocalOnly_FlockThatStaysOnThisMachine(t *testing.T) {
	for _, tc := range []struct {
		fstype, opts string
		local        bool
	}{
		{"ext4", "rw,relatime", false},
		{"tmpfs", "rw", false},
		{"overlay", "rw,lowerdir=/a", false},
		{"fuse.sshfs", "rw,user_id=0", true},
		{"fuse", "rw", true}, // bindfs
		{"fuseblk", "rw", true},
		{"virtiofs", "rw", true},
		{"9p", "rw,trans=virtio", true},
		{"nfs4", "rw,vers=4.2,local_lock=none", false},
		{"nfs", "rw,vers=3,local_lock=posix", false}, // flock is emulated by NFS locks
		{"nfs", "rw,vers=3,nolock,local_lock=all", true},
		{"nfs", "rw,vers=3,nolock", true},
		{"nfs4", "rw,vers=4.1,local_lock=flock", true},
		{"cifs", "rw,vers=3.1.1", false},
		{"cifs", "rw,vers=3.1.1,nobrl", true},
		{"smb3", "rw,nobrl", true},
	} {
		m := mount{FSType: tc.fstype, Options: strings.Split(tc.opts, ",")}
		if got := m.LocalOnly(); got != tc.local {
			t.Errorf("%s %s: LocalOnly = %v, want %v", tc.fstype, tc.opts, got, tc.local)
		}
	}
}

func TestParseMountinfo_MountOfTheDevice(t *testing.T) {
	const text = `22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw,errors=remount-ro
42 27 0:39 / /tmp/bf/a rw,nosuid,nodev,relatime - fuse /tmp/bf/shared rw,user_id=0,group_id=0
50 22 0:52 / /home rw,relatime shared:9 - nfs srv:/home rw,vers=3,rsize=1048576,nolock,local_lock=all,addr=10.0.0.1
51 22 0:52 /x /mnt/x rw,relatime shared:9 - nfs srv:/home rw,vers=3,nolock,local_lock=all,addr=10.0.0.1
`
	for _, tc := range []struct {
		major, minor uint32
		fstype       string
		local, ok    bool
	}{
		{8, 1, "ext4", false, true},
		{0, 39, "fuse", true, true},
		{0, 52, "nfs", true, true},
		{0, 99, "", false, false},
	} {
		m, ok := parseMountinfo(text, tc.major, tc.minor)
		if ok != tc.ok || m.FSType != tc.fstype || m.LocalOnly() != tc.local {
			t.Errorf("%d:%d = %+v, %v; want %s local=%v found=%v", tc.major, tc.minor, m, ok, tc.fstype, tc.local, tc.ok)
		}
	}
}
