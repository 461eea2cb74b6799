//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package main

import (
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// raise kills padrun by sig with no core dump. It returns only if padrun survived.
func raise(sig syscall.Signal) {
	unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{}) // Best effort.
	signal.Reset(sig)
	unix.Kill(os.Getpid(), sig) // Best effort.
}
