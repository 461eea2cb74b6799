package supervise

import (
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/padrun/padrun/marker/ident"
)

func sysProcAttr(ownGroup bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: ownGroup, Pdeathsig: syscall.SIGKILL}
}

// cldStopped is the si_code of a child that stopped (CLD_STOPPED).
const cldStopped = 5

// watch waits for the child to exit without reaping it, so that its pid
// cannot be reused while signals are still forwarded to it; reap then
// collects its status. With stopped set, it also reports each stop.
func watch(pid int, stopped chan<- struct{}) (exited <-chan struct{}, reap func() unix.WaitStatus) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		opts := unix.WEXITED | unix.WNOWAIT
		if stopped != nil {
			opts |= unix.WSTOPPED
		}
		for {
			var info unix.Siginfo
			err := unix.Waitid(unix.P_PID, pid, &info, opts, nil)
			switch {
			case err == unix.EINTR:
			case err == nil && info.Code == cldStopped:
				// Consume the stop (not the exit) before reporting it.
				unix.Waitid(unix.P_PID, pid, &info, unix.WSTOPPED|unix.WNOHANG, nil)
				stopped <- struct{}{}
			default:
				return
			}
		}
	}()
	return done, func() unix.WaitStatus { return wait4(pid) }
}

func wait4(pid int) unix.WaitStatus {
	var ws unix.WaitStatus
	for {
		if _, err := unix.Wait4(pid, &ws, 0, nil); err != unix.EINTR {
			return ws
		}
	}
}

// descendants lists the processes below pid, read from /proc.
func descendants(pid int) []int {
	des, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, de := range des {
		p, err := strconv.Atoi(de.Name())
		if err != nil {
			continue
		}
		if ppid, err := ident.ParentPid(p); err == nil {
			children[ppid] = append(children[ppid], p)
		}
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

const (
	ioctlGetTermios = unix.TCGETS
	ioctlSetTermios = unix.TCSETS
)
