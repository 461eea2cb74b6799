//go:build unix

package marker

import "golang.org/x/sys/unix"

// owner returns the uid that owns path, without following a symlink.
func owner(path string) (int, bool) {
	var st unix.Stat_t
	if unix.Lstat(path, &st) != nil {
		return 0, false
	}
	return int(st.Uid), true
}
