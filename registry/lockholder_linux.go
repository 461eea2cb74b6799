package registry

import (
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/padrun/padrun/marker/ident"
	"github.com/padrun/padrun/marker/safefile"
)

// lockHolder names the process that holds a flock on the open file h, from
// /proc/locks: "pid 1234 (flock)", or "" when it cannot be seen. Inodes are
// matched without the device: overlay filesystems report the device of the
// layer below.
func lockHolder(h safefile.Handle) string {
	var st unix.Stat_t
	if unix.Fstat(h, &st) != nil {
		return ""
	}
	pid, held, err := ident.FlockHolder(st.Ino)
	if err != nil || !held || pid <= 0 {
		return ""
	}
	return "pid " + strconv.Itoa(pid) + " (" + command(pid) + ")"
}

// command is pid's command name, or why it has none.
func command(pid int) string {
	if c := ident.Command(pid); c != "" {
		return c
	}
	return "gone: the lock lives on in a descriptor it passed on"
}
