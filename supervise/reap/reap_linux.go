package reap

import (
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Orphans reaps every child of this process that has exited, except
// padrun's own (Start's) and skip (the harness, which its supervisor
// reaps).
func Orphans(skip int) {
	mu.Lock()
	defer mu.Unlock()
	if reapHead(skip) == blocked {
		reapListed(skip)
	}
}

// Left reaps as Orphans does and reports whether any child other than
// padrun's own is left, alive or not yet reaped. When the children cannot
// be listed, it says some are.
func Left() bool {
	mu.Lock()
	defer mu.Unlock()
	if reapHead(0) == none {
		return false // no list to read: every thread's would be empty
	}
	return reapListed(0)
}

// head is where reapHead stopped.
type head int

const (
	none    head = iota // no child at all (ECHILD)
	running             // children, none of which has exited, or waitid failed
	blocked             // at an exited child that is padrun's own or skip
)

// reapHead reaps exited children as long as the kernel's first one is
// neither padrun's own nor skip: one waitid each, the cheap path. It says
// where it stopped: at one of those, the rest need the list of children.
func reapHead(skip int) head {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
		if err == unix.EINTR {
			continue
		}
		pid := int(siginfoPid(&info))
		switch {
		case err == unix.ECHILD:
			return none
		case err != nil || pid <= 0:
			return running // none has exited
		case pid == skip || own[pid]:
			return blocked
		}
		var ws unix.WaitStatus
		unix.Wait4(pid, &ws, unix.WNOHANG, nil) // Best effort.
	}
}

// reapListed reaps, one by one, the listed children that are neither
// padrun's own nor skip and have exited; it reports whether any such
// child is left, or the children could not be listed.
func reapListed(skip int) (left bool) {
	kids, ok := children()
	if !ok {
		return true
	}
	for _, pid := range kids {
		if pid == skip || own[pid] {
			continue
		}
		var ws unix.WaitStatus
		if got, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil); err == nil && got == 0 {
			left = true // alive
		}
	}
	return left
}

// children lists this process's children, every thread's: the kernel
// lists a child, zombie or not, under the thread that forked it or that
// it was reparented to.
func children() (pids []int, ok bool) {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil, false
	}
	for _, t := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + t.Name() + "/children")
		if err != nil {
			return nil, false // the thread ended: its children moved to another one
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return pids, true
}

// siginfoPid reads si_pid from a siginfo_t: the first field of its union,
// after three ints (signo, errno, code), aligned like a pointer.
func siginfoPid(info *unix.Siginfo) int32 {
	off := 3*4 + (unsafe.Sizeof(uintptr(0)) - 4)
	return *(*int32)(unsafe.Add(unsafe.Pointer(info), off))
}
