//go:build unix

package ident

import "golang.org/x/sys/unix"

// exists asks the kernel whether pid exists: a process of another user
// (EPERM) exists too.
func exists(pid int) Verdict {
	switch err := unix.Kill(pid, 0); err {
	case nil, unix.EPERM:
		return Alive
	case unix.ESRCH:
		return Dead
	}
	return Unknown
}
