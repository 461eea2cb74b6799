//go:build unix

package registry

import (
	"errors"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/padrun/padrun/marker/ident"
)

// statIdentity returns the inode and device of a stat'ed file, as pad
// records them.
func statIdentity(fi os.FileInfo) (ino, dev uint64, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || st == nil {
		return 0, 0, false
	}
	return st.Ino, uint64(st.Dev), true
}

// procState reads a pid's start token and state (a variable so that tests
// can make /proc unreadable).
var procState = ident.State

// pidLiveness judges the owner pid as pad does: kill(pid, 0) failing with
// anything but EPERM is dead; no token recorded is alive on the pid alone;
// a token that differs, a pid gone meanwhile or a zombie is dead; a pid
// that cannot be examined is unknown.
func pidLiveness(pid int, token string) (ident.Verdict, string) {
	p := "pid " + strconv.Itoa(pid)
	if !ident.ValidPid(pid) {
		return ident.Dead, p + " cannot exist" // kill(2) would take it for another pid (docs/spec.md §5, rung 5)
	}
	if err := unix.Kill(pid, 0); err != nil && err != unix.EPERM {
		return ident.Dead, p + " is gone"
	}
	if token == "" {
		return ident.Alive, p + " exists (unverified: no start time recorded)"
	}
	now, zombie, err := procState(pid)
	switch {
	case errors.Is(err, os.ErrNotExist), errors.Is(err, unix.ESRCH):
		return ident.Dead, p + " is gone"
	case err != nil:
		return ident.Unknown, p + " exists but its start time cannot be read"
	case zombie:
		return ident.Dead, p + " is a zombie"
	case now != token:
		return ident.Dead, p + " was reused (start time " + now + ", recorded " + token + ")"
	}
	return ident.Alive, p + " start time matches"
}
