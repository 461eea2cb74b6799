package supervise

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Tree is a cgroup v2 of the session's own: the child is born in it
// (clone3 with CLONE_INTO_CGROUP), so every process of the session, however
// it forks, setsids or loses its parent, stays in it; cgroup.events says
// whether any still lives and cgroup.kill ends them all.
type Tree struct {
	Path string // the cgroup's folder
	fd   int    // the folder, open for clone3
}

// cgroup2Magic is CGROUP2_SUPER_MAGIC.
const cgroup2Magic = 0x63677270

// NewTree makes a cgroup for the session, named padrun-<tag>, below
// padrun's own cgroup. It returns nil where there is no cgroup v2 or padrun
// may not make one there (a user without a delegated subtree).
func NewTree(tag string) *Tree {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil
	}
	own := ""
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			own = p
		}
	}
	if own == "" || strings.HasSuffix(own, " (deleted)") {
		return nil
	}
	for _, mnt := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
		var fs unix.Statfs_t
		if unix.Statfs(mnt, &fs) != nil || fs.Type != cgroup2Magic {
			continue
		}
		dir := filepath.Join(mnt, own, "padrun-"+tag)
		if err := unix.Mkdir(dir, 0o755); err != nil {
			return nil
		}
		fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			unix.Rmdir(dir) // Best effort.
			return nil
		}
		return &Tree{Path: dir, fd: fd}
	}
	return nil
}

// Remove removes the cgroup if nothing lives in it any more; it reports
// whether the cgroup is gone.
func (t *Tree) Remove() bool {
	if t == nil {
		return true
	}
	if t.fd >= 0 {
		unix.Close(t.fd)
		t.fd = -1
	}
	err := unix.Rmdir(t.Path)
	return err == nil || err == unix.ENOENT
}

// populated reports whether any process lives in the cgroup or below it.
// An unreadable cgroup.events counts as populated: fail closed.
func (t *Tree) populated() bool {
	b, err := os.ReadFile(filepath.Join(t.Path, "cgroup.events"))
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	return !bytes.Contains(b, []byte("populated 0"))
}

// procs lists the processes in the cgroup and below it.
func (t *Tree) procs() []int {
	var pids []int
	filepath.WalkDir(t.Path, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(filepath.Join(p, "cgroup.procs")) // Best effort: gone meanwhile.
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				pids = append(pids, pid)
			}
		}
		return nil
	})
	return pids
}

// kill sends SIGKILL to every process of the cgroup at once.
func (t *Tree) kill() error {
	return os.WriteFile(filepath.Join(t.Path, "cgroup.kill"), []byte("1"), 0)
}

// subreaper makes padrun the reaper of its session's orphans, so that a
// process whose parent died stays padrun's descendant while padrun lives.
func subreaper() {
	unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) // Best effort: an old kernel.
}

// forkExec starts the child in the session's cgroup. Where the kernel
// refuses to place it there, the cgroup is dropped (removed, so that the
// marker's orphan check falls back to the child's group) and the child
// started without it.
func forkExec(path string, args []string, attr *syscall.ProcAttr, t *Tree) (pid int, tree *Tree, err error) {
	if t != nil && t.fd >= 0 {
		attr.Sys.UseCgroupFD, attr.Sys.CgroupFD = true, t.fd
		pid, err = syscall.ForkExec(path, args, attr)
		if err == nil {
			return pid, t, nil
		}
		attr.Sys.UseCgroupFD, attr.Sys.CgroupFD = false, 0
		t.Remove()
	}
	pid, err = syscall.ForkExec(path, args, attr)
	return pid, nil, err
}

// rest lists the processes of the session other than the child, which has
// been reaped: the cgroup's, else padrun's descendants (orphans come to
// padrun, its subreaper). It costs one small read, or one wait call, when
// there are none.
func (c *Child) rest() []int {
	if c.tree != nil {
		if !c.tree.populated() {
			return nil
		}
		return c.tree.procs()
	}
	for {
		// Reap orphans that died: they are padrun's zombies now.
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		if err == unix.EINTR || (err == nil && pid > 0) {
			continue
		}
		if err == unix.ECHILD {
			return nil // no child at all: no descendant either
		}
		break
	}
	return descendants(os.Getpid())
}

// signalRest sends sig to every process of the session; SIGKILL through
// cgroup.kill, which no fork can outrun.
func (c *Child) signalRest(sig syscall.Signal) {
	if c.tree != nil && sig == unix.SIGKILL && c.tree.kill() == nil {
		return
	}
	for _, pid := range c.rest() {
		unix.Kill(pid, sig) // Best effort: it may be gone.
	}
}

// killAll sends SIGKILL to every process of the session: the cgroup's,
// the child's group when it leads one, and every descendant of padrun.
func (c *Child) killAll() {
	if c.tree != nil {
		c.tree.kill() // Best effort: the rest below still runs.
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
