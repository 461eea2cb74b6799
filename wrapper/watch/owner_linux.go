package watch

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/padrun/padrun/marker/ident"
)

// A new session file is this run's only when padrun can prove that its own
// process tree writes it (docs/spec.md §4.4, "Whose file is it"). Two proofs:
//   - a process of the tree holds the file open for writing (codex keeps its
//     rollout open): read from /proc, for any user;
//   - fanotify names the pid of each write to a watched folder's files (pi
//     opens, appends and closes at once): only with CAP_SYS_ADMIN.
// Without a proof the file is not claimed.

// fileKey names a file by its inode and its name, so that a reused inode
// under another name is another file.
type fileKey struct {
	dev, ino uint64
	name     string
}

func keyOf(path string) (fileKey, bool) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return fileKey{}, false
	}
	return fileKey{uint64(st.Dev), st.Ino, filepath.Base(path)}, true
}

// membership is whether a process belongs to the run's tree.
type membership int

const (
	gone    membership = iota // the process, or one on its way up, is gone
	inside                    // root or one of its descendants
	outside                   // its parent chain reaches pid 1 without root
)

// inTree judges pid by the parent chain as it stands now. A process
// reparented away from root (a double fork without a subreaper) is outside:
// no proof, no claim.
func inTree(pid, root int) membership {
	for i := 0; i < 4096; i++ {
		switch {
		case pid == root:
			return inside
		case pid == 1:
			return outside
		case pid <= 0:
			return gone
		}
		pid, _ = ident.ParentPid(pid) // 0 when it is gone
	}
	return outside
}

// OfTree reports whether pid, alive, is of root's process tree.
func OfTree(pid, root int) bool { return inTree(pid, root) == inside }

// writers scans /proc for processes holding f open for writing: ours says
// one of root's tree does, foreign that another process does.
func writers(f fileKey, root int) (ours, foreign bool) {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return false, false
	}
	self := strconv.Itoa(os.Getpid())
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || p.Name() == self {
			continue
		}
		if !writes(pid, f) {
			continue
		}
		switch inTree(pid, root) {
		case inside:
			ours = true
		case outside:
			foreign = true
		}
	}
	return ours, foreign
}

// writes reports whether pid holds f open for writing.
func writes(pid int, f fileKey) bool {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd/"
	fds, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, fd := range fds {
		target, err := os.Readlink(dir + fd.Name())
		if err != nil || filepath.Base(target) != f.name {
			continue
		}
		if k, ok := keyOf(dir + fd.Name()); !ok || k.dev != f.dev || k.ino != f.ino {
			continue
		}
		info, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/fdinfo/" + fd.Name())
		if err == nil && writeFlags(string(info)) {
			return true
		}
	}
	return false
}

// writeFlags reads the access mode from an fdinfo's "flags:" line (octal).
func writeFlags(fdinfo string) bool {
	for _, line := range strings.Split(fdinfo, "\n") {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			fl, err := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
			return err == nil && fl&unix.O_ACCMODE != unix.O_RDONLY
		}
	}
	return false
}

// fanWatch reports the pid of every write to the files of marked folders.
// It needs CAP_SYS_ADMIN; without it, newFanWatch fails and only /proc
// proves ownership.
type fanWatch struct{ fd int }

func newFanWatch() (*fanWatch, error) {
	fd, err := unix.FanotifyInit(unix.FAN_CLASS_NOTIF|unix.FAN_CLOEXEC|unix.FAN_NONBLOCK, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_LARGEFILE)
	if err != nil {
		return nil, err
	}
	return &fanWatch{fd}, nil
}

func (w *fanWatch) mark(dir string) error {
	return unix.FanotifyMark(w.fd, unix.FAN_MARK_ADD, unix.FAN_MODIFY|unix.FAN_CLOSE_WRITE|unix.FAN_EVENT_ON_CHILD, unix.AT_FDCWD, dir)
}

// read drains the queued events, calling wrote for each with the writer's
// pid and the written file.
func (w *fanWatch) read(buf []byte, wrote func(pid int, f fileKey)) {
	for {
		n, err := unix.Read(w.fd, buf)
		if err != nil || n <= 0 {
			return
		}
		for off := 0; off+int(unsafe.Sizeof(unix.FanotifyEventMetadata{})) <= n; {
			m := (*unix.FanotifyEventMetadata)(unsafe.Pointer(&buf[off]))
			if m.Event_len < uint32(unsafe.Sizeof(unix.FanotifyEventMetadata{})) {
				return
			}
			off += int(m.Event_len)
			if m.Fd < 0 {
				continue
			}
			fd := int(m.Fd)
			target, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
			var st unix.Stat_t
			if err == nil && unix.Fstat(fd, &st) == nil {
				wrote(int(m.Pid), fileKey{uint64(st.Dev), st.Ino, filepath.Base(target)})
			}
			unix.Close(fd)
		}
	}
}

func (w *fanWatch) close() { unix.Close(w.fd) }

// TreeOpens reports whether a process of root's tree holds path open for
// writing.
func TreeOpens(path string, root int) bool {
	f, ok := keyOf(path)
	if !ok {
		return false
	}
	ours, _ := writers(f, root)
	return ours
}
