//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package supervise

import (
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// sysProcAttr: no parent-death signal here (macOS has none); an orphaned
// child is left to its process group.
func sysProcAttr(ownGroup bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: ownGroup}
}

// watch reaps the child when it exits: there is no waitid(WNOWAIT) here,
// so a signal may in principle race the reap. Stops are not reported.
func watch(pid int, _ chan<- struct{}) (exited <-chan struct{}, reap func() unix.WaitStatus) {
	done := make(chan struct{})
	var ws unix.WaitStatus
	go func() {
		for {
			if _, err := unix.Wait4(pid, &ws, 0, nil); err != unix.EINTR {
				break
			}
		}
		close(done)
	}()
	return done, func() unix.WaitStatus { return ws }
}

// descendants is not available here without libproc or libkvm: the group
// kill and the child itself are what padrun can reach.
func descendants(int) []int { return nil }

// Raise kills padrun by sig with no core dump. It returns only if padrun survived.
func Raise(sig syscall.Signal) {
	unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{}) // Best effort.
	signal.Reset(sig)
	unix.Kill(os.Getpid(), sig) // Best effort.
}

const (
	ioctlGetTermios = unix.TIOCGETA
	ioctlSetTermios = unix.TIOCSETA
)
