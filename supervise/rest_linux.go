package supervise

import (
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/padrun/padrun/supervise/cgroup"
	"github.com/padrun/padrun/supervise/reap"
)

// subreaper makes padrun the reaper of its session's orphans, so that a
// process whose parent died stays padrun's descendant while padrun lives.
func subreaper() {
	unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) // Best effort: an old kernel.
}

// reapOthers reaps, while the child runs, the orphans of the session that
// died as padrun's (its subreaper's) children, so that they do not stay
// zombies until padrun exits. The child itself is left to Supervise, and
// padrun's own os/exec children to their Wait (package reap).
func reapOthers(child int) { reap.Orphans(child) }

// forkExec starts the child in the session's cgroup. Where the kernel
// refuses to place it there, the cgroup is dropped (removed, so that the
// marker's orphan check falls back to the child's group) and the child
// started without it.
func forkExec(path string, args []string, attr *syscall.ProcAttr, cg *cgroup.Session) (pid int, in *cgroup.Session, err error) {
	if fd := cg.FD(); fd >= 0 {
		attr.Sys.UseCgroupFD, attr.Sys.CgroupFD = true, fd
		pid, err = syscall.ForkExec(path, args, attr)
		cg.CloseFD()
		if err == nil {
			return pid, cg, nil
		}
		attr.Sys.UseCgroupFD, attr.Sys.CgroupFD = false, 0
		cg.Remove()
	}
	pid, err = syscall.ForkExec(path, args, attr)
	return pid, nil, err
}

// rest lists the processes of the session other than the child, which has
// been reaped: the cgroup's, else padrun's descendants (orphans come to
// padrun, its subreaper). It costs one small read, or one wait call, when
// there are none.
func (c *Child) rest() []int {
	// Orphans that died are padrun's zombies now: reap them first.
	none := !reap.Left()
	if c.cgroup != nil {
		if c.cgroup.RemoveEmpty() {
			return nil // empty: gone with one rmdir, before the markers that name it
		}
		if !c.cgroup.Populated() {
			return nil
		}
		return c.cgroup.Procs()
	}
	if none {
		return nil // no child at all: no descendant either
	}
	return descendants(os.Getpid())
}

// signalRest sends sig to every process of the session; SIGKILL through
// cgroup.kill, which no fork can outrun.
func (c *Child) signalRest(sig syscall.Signal) {
	if c.cgroup != nil && sig == unix.SIGKILL && c.cgroup.Kill() == nil {
		return
	}
	for _, pid := range c.rest() {
		unix.Kill(pid, sig) // Best effort: it may be gone.
	}
}

// killAll sends SIGKILL to every process of the session: the cgroup's,
// the child's group when it leads one, and every descendant of padrun.
func (c *Child) killAll() {
	if c.cgroup != nil {
		c.cgroup.Kill() // Best effort: the rest below still runs.
	}
	if c.ownGroup {
		unix.Kill(-c.Pid, unix.SIGKILL) // Best effort.
	}
	for _, pid := range descendants(os.Getpid()) {
		unix.Kill(pid, unix.SIGKILL) // Best effort.
	}
}

// waitRestEvery is how often padrun looks whether what the child left has
// ended: only while some of it runs, never on a run without leftovers.
const waitRestEvery = 10 * time.Millisecond
