package wrapper

import (
	"os"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/padrun/padrun/marker/ident"
)

// procFS is /proc. A process's command line is read with raw
// open/read/close into the pass's one buffer: the pass opens one file per
// process, and only a harness's process is read further.
type procFS struct{ self int }

func (p procFS) pids() ([]int, error) {
	f, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	pids := make([]int, 0, len(names))
	for _, n := range names {
		if n[0] < '0' || n[0] > '9' {
			continue
		}
		if pid, err := strconv.Atoi(n); err == nil && pid != p.self {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// maxCmdline bounds a harness's command line read whole.
const maxCmdline = 1 << 20

func (procFS) cmdline(pid int, buf []byte, whole bool) ([]byte, error) {
	fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/cmdline", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	n, err := unix.Read(fd, buf)
	if err != nil || !whole || n < len(buf) {
		return buf[:max(n, 0)], err
	}
	out := append([]byte(nil), buf[:n]...)
	for len(out) < maxCmdline {
		n, err := unix.Read(fd, buf)
		if err != nil || n == 0 {
			return out, err
		}
		out = append(out, buf[:n]...)
	}
	return out, nil
}

func (procFS) cwd(pid int) (string, error) { return os.Readlink("/proc/" + strconv.Itoa(pid) + "/cwd") }

func (procFS) environ(pid int) ([]byte, error) {
	return os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
}

func (procFS) owner(pid int) (int, bool) {
	var st unix.Stat_t
	if err := unix.Stat("/proc/"+strconv.Itoa(pid), &st); err != nil {
		return 0, false
	}
	return int(st.Uid), true
}

func (p procFS) skip(pid int) bool { return ofTree(pid, p.self) }

func (procFS) started(pid int) (time.Time, bool) { return startedAt(pid) }

// procWriters is the live processes of harnesses outside the run's own
// tree, and what they write: one pass over /proc.
func procWriters(self ident.Self) ([]outsider, error) {
	var buf [4096]byte
	return matchProcs(procFS{self: self.Pid}, buf[:])
}

// mayWrite reports whether uid may write file (or, while it does not
// exist, create it in its folder): its owner, or a mode open to others.
func mayWrite(uid int, file string) bool {
	var st unix.Stat_t
	if err := unix.Stat(file, &st); err != nil {
		if err := unix.Stat(filepath.Dir(file), &st); err != nil {
			return false
		}
	}
	return int(st.Uid) == uid || st.Mode&0o022 != 0
}
