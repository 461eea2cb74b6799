//go:build unix

package wrapper

import (
	"io/fs"
	"syscall"
)

// owner is a file's owner; ok is false where the system does not say.
func owner(fi fs.FileInfo) (uid int, ok bool) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid), true
	}
	return -1, false
}
