package wrapper

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/padrun/padrun/marker/ident"
)

// procFS is /proc. A process's command line is read with raw
// openat/read/close, relative to /proc, into the pass's one buffer: the
// pass costs three system calls a process, and only a harness's process is
// read further.
type procFS struct {
	self int
	dir  int    // /proc, open
	path []byte // "PID/cmdline\x00", built in place
}

// openProc opens /proc for one pass; close it with closeProc.
func openProc(self int) (*procFS, error) {
	fd, err := unix.Open("/proc", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return &procFS{self: self, dir: fd, path: make([]byte, 0, 32)}, nil
}

func (p *procFS) closeProc() { unix.Close(p.dir) }

func (p *procFS) pids() ([]int, error) {
	// 8 KiB: about 300 entries a read; a bigger buffer costs every run its
	// pages (a new 64 KiB one: 16 page faults).
	buf := make([]byte, 8<<10)
	var pids []int
	for {
		n, err := unix.Getdents(p.dir, buf)
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return pids, nil
		}
		for b := buf[:n]; len(b) > 0; {
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			name := b[19:reclen]
			b = b[reclen:]
			pid := 0
			for _, c := range name {
				if c == 0 {
					break
				}
				if c < '0' || c > '9' {
					pid = -1
					break
				}
				pid = pid*10 + int(c-'0')
			}
			if pid > 0 && pid != p.self {
				pids = append(pids, pid)
			}
		}
	}
}

// exe reads the executable pid runs (/proc/PID/exe) into buf: one system
// call, where its command line takes three.
func (p *procFS) exe(pid int, buf []byte) ([]byte, error) {
	p.path = append(strconv.AppendInt(p.path[:0], int64(pid), 10), "/exe\x00"...)
	r, _, errno := unix.Syscall6(unix.SYS_READLINKAT, uintptr(p.dir), uintptr(unsafe.Pointer(&p.path[0])), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0)
	if errno != 0 {
		return nil, errno
	}
	return buf[:r], nil
}

// maxCmdline bounds a harness's command line read whole.
const maxCmdline = 1 << 20

func (p *procFS) cmdline(pid int, buf []byte, whole bool) ([]byte, error) {
	p.path = append(strconv.AppendInt(p.path[:0], int64(pid), 10), "/cmdline\x00"...)
	r, _, errno := unix.Syscall6(unix.SYS_OPENAT, uintptr(p.dir), uintptr(unsafe.Pointer(&p.path[0])), unix.O_RDONLY|unix.O_CLOEXEC, 0, 0, 0)
	if errno != 0 {
		return nil, errno
	}
	fd := int(r)
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

func (*procFS) cwd(pid int) (string, error) {
	return os.Readlink("/proc/" + strconv.Itoa(pid) + "/cwd")
}

func (*procFS) environ(pid int) ([]byte, error) {
	return os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
}

func (*procFS) owner(pid int) (int, bool) {
	var st unix.Stat_t
	if err := unix.Stat("/proc/"+strconv.Itoa(pid), &st); err != nil {
		return 0, false
	}
	return int(st.Uid), true
}

func (p *procFS) skip(pid int) bool { return ofTree(pid, p.self) }

func (*procFS) started(pid int) (time.Time, bool) { return startedAt(pid) }

// procWriters is the live processes of harnesses outside the run's own
// tree, and what they write: one pass over /proc.
func procWriters(self ident.Self) ([]outsider, error) {
	p, err := openProc(self.Pid)
	if err != nil {
		return nil, err
	}
	defer p.closeProc()
	var buf [4096]byte
	return matchProcs(p, buf[:])
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
