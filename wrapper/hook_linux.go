package wrapper

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// stopHarness SIGKILLs the harness that runs this hook: the ancestor whose
// parent is the session's padrun, else the hook's parent.
func stopHarness() {
	session, _ := strconv.Atoi(os.Getenv("PAD_SESSION_PID"))
	pid := os.Getppid()
	for p := pid; p > 1; {
		parent := parentOf(p)
		if parent == session && session > 0 {
			pid = p
			break
		}
		p = parent
	}
	unix.Kill(pid, unix.SIGKILL) // Best effort.
}

// parentOf reads a process's parent pid from /proc, or 0.
func parentOf(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndex(s, ")")+1:])
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}
