//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package supervise

import (
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/padrun/padrun/supervise/cgroup"
)

// sysProcAttr: no parent-death signal here (macOS has none); an orphaned
// child is left to its process group.
func sysProcAttr(ownGroup bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: ownGroup}
}

// stopOpts: stops are not reported here.
const stopOpts = 0

// subreaper: padrun makes no subreaper here; orphans go to init (launchd).
func subreaper() {}

// forkExec starts the child: there are no cgroups here.
func forkExec(path string, args []string, attr *syscall.ProcAttr, _ *cgroup.Session) (int, *cgroup.Session, error) {
	pid, err := syscall.ForkExec(path, args, attr)
	return pid, nil, err
}

// reapOthers: without a subreaper no orphan comes to padrun.
func reapOthers(int) {}

// rest: here padrun cannot list what the child left; its group, when it
// leads one, is ended with it (killAll).
func (c *Child) rest() []int { return nil }

func (c *Child) signalRest(syscall.Signal) {}

// killAll sends SIGKILL to the child's group when it leads one, else to the
// child: descendants cannot be listed here without libproc or libkvm.
func (c *Child) killAll() {
	if c.ownGroup {
		unix.Kill(-c.Pid, unix.SIGKILL) // Best effort.
		return
	}
	unix.Kill(c.Pid, unix.SIGKILL) // Best effort.
}

const waitRestEvery = 10 * time.Millisecond

const (
	ioctlGetTermios = unix.TIOCGETA
	ioctlSetTermios = unix.TIOCSETA
)
