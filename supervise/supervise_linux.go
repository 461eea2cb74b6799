package supervise

import (
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/padrun/padrun/marker/ident"
	"github.com/padrun/padrun/supervise/reap"
)

func sysProcAttr(ownGroup bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: ownGroup, Pdeathsig: syscall.SIGKILL}
}

// stopOpts makes wait4 report the child's stops too.
const stopOpts = unix.WUNTRACED

// descendants lists the processes below pid, read from /proc, but for
// padrun's own os/exec children (package reap) and what is below them.
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
	self := os.Getpid()
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			if p == self && reap.Own(c) {
				continue // padrun's own os/exec child, not the session's
			}
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
