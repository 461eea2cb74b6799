package supervise

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Tree is a cgroup v2 of the session's own: the child is born in it
// (clone3 with CLONE_INTO_CGROUP), so every process of the session, however
// it forks, setsids or loses its parent, stays in it; cgroup.events says
// whether any still lives and cgroup.kill ends them all.
type Tree struct {
	Path string
	made bool // Make was called
	fd   int  // the folder, open for clone3 until the fork; -1 when not made
	gone bool // removed, or never made
}

// cgroup2Magic is CGROUP2_SUPER_MAGIC.
const cgroup2Magic = 0x63677270

// NewTree names a cgroup for the session, padrun-<tag> below padrun's own
// cgroup; Make makes it. It returns nil where there is no cgroup v2 or
// padrun may not write there (a user without a delegated subtree).
func NewTree(tag string) *Tree {
	parent := treeParent()
	if parent == "" {
		return nil
	}
	return &Tree{Path: filepath.Join(parent, treePrefix+tag), fd: -1}
}

// treePrefix starts the name of every session cgroup.
const treePrefix = "padrun-"

// treeParent returns padrun's own cgroup v2 folder, where the sessions'
// cgroups are made, or "" where there is none padrun may write in.
func treeParent() string {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	own := ""
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			own = p
		}
	}
	if own == "" || strings.HasSuffix(own, " (deleted)") {
		return ""
	}
	for _, mnt := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
		var fs unix.Statfs_t
		if unix.Statfs(mnt, &fs) != nil || fs.Type != cgroup2Magic {
			continue
		}
		parent := filepath.Join(mnt, own)
		if unix.Access(parent, unix.W_OK) != nil {
			return ""
		}
		return parent
	}
	return ""
}

// LeftTree is a session cgroup found beside padrun's own sessions': its
// name tells the padrun that made it.
type LeftTree struct {
	Path string
	// Tag is what follows the prefix in its name: NewTree's tag.
	Tag  string
	Made time.Time // the folder's change time
}

// LeftTrees lists the session cgroups made below padrun's own cgroup, where
// NewTree makes them: those of padruns that run, and those that padruns
// killed by SIGKILL could not remove.
func LeftTrees() ([]LeftTree, error) {
	parent := treeParent()
	if parent == "" {
		return nil, nil
	}
	ents, err := os.ReadDir(parent)
	if err != nil {
		return nil, err
	}
	var out []LeftTree
	for _, e := range ents {
		tag, ok := strings.CutPrefix(e.Name(), treePrefix)
		if !ok || !e.IsDir() {
			continue
		}
		var st unix.Stat_t
		p := filepath.Join(parent, e.Name())
		if unix.Lstat(p, &st) != nil {
			continue // gone meanwhile
		}
		out = append(out, LeftTree{Path: p, Tag: tag, Made: time.Unix(st.Ctim.Unix())})
	}
	return out, nil
}

// RemoveLeftTree removes an empty session cgroup with one rmdir, which the
// kernel refuses while any process lives in it: then gone is false and
// procs lists those processes.
func RemoveLeftTree(path string) (gone bool, procs []int, err error) {
	switch err := unix.Rmdir(path); err {
	case nil, unix.ENOENT:
		return true, nil, nil
	case unix.EBUSY:
		return false, (&Tree{Path: path}).procs(), nil
	default:
		return false, nil, err
	}
}

// Make makes the cgroup. Call it once the marker that names it is
// published: a padrun killed in between leaves no cgroup that no marker
// names. Should making it fail, the child starts without it and Path names
// a folder that does not exist, which the orphan check reads as such. It
// costs a mkdir and an open on the start-up path, less than a goroutine of
// its own did (a thread, and waking the start for it).
func (t *Tree) Make() {
	if t == nil || t.made {
		return
	}
	t.made = true
	if err := unix.Mkdir(t.Path, 0o755); err != nil {
		t.gone = true
		return
	}
	fd, err := unix.Open(t.Path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		unix.Rmdir(t.Path) // Best effort.
		t.gone = true
		return
	}
	t.fd = fd
}

// Remove removes the cgroup if nothing lives in it any more; it reports
// whether the cgroup is gone.
func (t *Tree) Remove() bool {
	if t == nil || !t.made || t.gone {
		return true
	}
	t.closeFd()
	// Right after its last process exited the kernel may still count it
	// (a zombie not yet reaped, an exit not yet accounted): try briefly.
	for try := 0; ; try++ {
		if t.removeEmpty() {
			return true
		}
		if try == 50 || len(t.procs()) > 0 {
			return false
		}
		reapZombies()
		time.Sleep(2 * time.Millisecond)
	}
}

// removeEmpty removes the cgroup when nothing lives in it, with one rmdir,
// which the kernel refuses (EBUSY) while any process does.
func (t *Tree) removeEmpty() bool {
	if t.gone {
		return true
	}
	if err := unix.Rmdir(t.Path); err != nil && err != unix.ENOENT {
		return false
	}
	t.gone = true
	return true
}

// closeFd closes the folder, which only the fork needed.
func (t *Tree) closeFd() {
	if t.fd >= 0 {
		unix.Close(t.fd)
		t.fd = -1
	}
}

// reapZombies reaps every child of padrun that has exited; it reports
// whether padrun has no child at all left.
func reapZombies() (none bool) {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		switch {
		case err == unix.EINTR || (err == nil && pid > 0):
		case err == unix.ECHILD:
			return true
		default:
			return false
		}
	}
}

// populated reports whether any process lives in the cgroup or below it.
// An unreadable cgroup.events counts as populated: fail closed.
func (t *Tree) populated() bool {
	fd, err := unix.Open(filepath.Join(t.Path, "cgroup.events"), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err != unix.ENOENT
	}
	defer unix.Close(fd)
	var b [256]byte
	n, err := unix.Read(fd, b[:])
	if err != nil || n <= 0 {
		return true
	}
	return !bytes.Contains(b[:n], []byte("populated 0"))
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

// reapOthers reaps, while the child runs, the orphans of the session that
// died as padrun's (its subreaper's) children, so that they do not stay
// zombies until padrun exits. The child itself is left to Supervise.
func reapOthers(child int) {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
		pid := int(siginfoPid(&info))
		if err != nil || pid <= 0 || pid == child {
			return // none, or the child's exit: Supervise reaps it
		}
		var ws unix.WaitStatus
		unix.Wait4(pid, &ws, unix.WNOHANG, nil) // Best effort.
	}
}

// forkExec starts the child in the session's cgroup. Where the kernel
// refuses to place it there, the cgroup is dropped (removed, so that the
// marker's orphan check falls back to the child's group) and the child
// started without it.
func forkExec(path string, args []string, attr *syscall.ProcAttr, t *Tree) (pid int, tree *Tree, err error) {
	if t != nil && t.fd >= 0 {
		attr.Sys.UseCgroupFD, attr.Sys.CgroupFD = true, t.fd
		pid, err = syscall.ForkExec(path, args, attr)
		t.closeFd()
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
	// Orphans that died are padrun's zombies now: reap them first.
	none := reapZombies()
	if c.tree != nil {
		if c.tree.removeEmpty() {
			return nil // empty: gone with one rmdir, before the markers that name it
		}
		if !c.tree.populated() {
			return nil
		}
		return c.tree.procs()
	}
	if none {
		return nil // no child at all: no descendant either
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

// siginfoPid reads si_pid from a siginfo_t: the first field of its union,
// after three ints (signo, errno, code), aligned like a pointer.
func siginfoPid(info *unix.Siginfo) int32 {
	off := 3*4 + (unsafe.Sizeof(uintptr(0)) - 4)
	return *(*int32)(unsafe.Add(unsafe.Pointer(info), off))
}
