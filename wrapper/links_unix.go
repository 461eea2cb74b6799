//go:build unix

package wrapper

import (
	"os"
	"syscall"
)

// linkCount is the number of names (hard links) of a regular file, 0 when
// it cannot tell.
func linkCount(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && fi.Mode().IsRegular() {
		return uint64(st.Nlink)
	}
	return 0
}
