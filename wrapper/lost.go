package wrapper

import (
	"fmt"
	"sync"

	"github.com/padrun/padrun/marker"
	"github.com/padrun/padrun/marker/ident"
	"github.com/padrun/padrun/wrapper/harness"
)

// Every change in a watched folder is seen (docs/spec.md §5 rule 10). A
// watch whose kernel queue overflowed rescans what it watches, and padrun
// says so once; a new session file that the child's own tree created but
// that another session holds by the time padrun claims it is a lost hold:
// two writers may share it, so padrun stops the child and exits 76.

// LostHoldError says the run lost its hold on a session file: its own
// child's tree created File, but another session held it when padrun came
// to claim it, and padrun stopped the child.
type LostHoldError struct {
	File  string
	Held  *marker.HeldError // the other session's hold
	Ended string            // what became of the child, once known
}

func (e *LostHoldError) Error() string {
	return "lost the hold on " + e.File + ": this run's child created it, but another session held it by the time padrun claimed it; " + e.Ended
}

// Hint says what to do next.
func (e *LostHoldError) Hint() string {
	return "both sessions may have written it: see its holder with padrun status " + harness.ShellQuote(e.File) + "; resume it once that session ends (queue with --wait 10m), or start a new session"
}

// loseHold stops the child, whose tree created file that held, another
// session's hold, covers: TERM, then KILL after the grace, as the fence
// does (the supervisor does it, once it runs). Unless the run was stopped
// for another reason first, it exits 76 (childStop.loseChild).
func (s *session) loseHold(file string, held *marker.HeldError) {
	s.loseChild(&LostHoldError{File: file, Held: held}, func(ended bool) {
		if ended {
			s.o.Log.Error().Str("file", file).Msg("lost the hold on a new session file: this run's child created it, but another session holds it; the child had ended already")
			return
		}
		s.o.Log.Error().Str("file", file).Msg(fmt.Sprintf("lost the hold on a new session file: this run's child created it, but another session holds it: stopping the child (TERM, then KILL after %s)", s.o.Grace))
	})
}

// stopping is what a lost hold says of the child while it is being stopped.
const stopping = "padrun is stopping the child"

// ofThisRun reports whether a hold is of a padrun of this run's own
// process tree: a session nested inside this one, which guards what its
// child writes, or the outer session this one runs in. Neither is a lost
// hold. Its marker names it; before that is written, the lock's holders.
func (s *session) ofThisRun(held *marker.HeldError) bool {
	var pids []int
	if m := held.Holder; m != nil {
		if m.Tool != marker.Tool || m.BootID != s.self.BootID || m.PidNamespace != s.self.PidNamespace {
			return false
		}
		pids = []int{m.Pid}
	} else {
		pids = ident.LockHolders(marker.LockPath(held.File))
	}
	for _, pid := range pids {
		if pid > 0 && pid != s.self.Pid && (ofTree(pid, s.self.Pid) || ofTree(s.self.Pid, pid)) {
			return true
		}
	}
	return false
}

// overflows says once per watch that its kernel queue overflowed.
type overflows struct {
	mu   sync.Mutex
	told map[string]bool
}

// watchOverflowed warns, once for each watch, that the kernel's queue of
// its events overflowed and what padrun looked at again for it.
func (s *session) watchOverflowed(which, rescanned string) {
	s.overflow.mu.Lock()
	defer s.overflow.mu.Unlock()
	if s.overflow.told[which] {
		return
	}
	if s.overflow.told == nil {
		s.overflow.told = map[string]bool{}
	}
	s.overflow.told[which] = true
	s.o.Log.Warn().Msg("the kernel's event queue of " + which + " overflowed (more changes at once than fs.inotify.max_queued_events): events were lost, so padrun " + rescanned)
}
