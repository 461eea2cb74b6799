package hook

import (
	"os"

	"golang.org/x/sys/unix"

	"github.com/padrun/padrun/marker/ident"
)

// stopHarness SIGKILLs the harness that runs this hook: the ancestor whose
// parent is the session's padrun ($PAD_SESSION_PID), else the hook's parent
// (session 0: none).
func stopHarness(session int) {
	pid := os.Getppid()
	for p := pid; p > 1; {
		parent, _ := ident.ParentPid(p) // 0 when it is gone
		if parent == session && session > 0 {
			pid = p
			break
		}
		p = parent
	}
	unix.Kill(pid, unix.SIGKILL) // Best effort.
}
