package wrapper

import (
	"os"
	"path/filepath"
	"slices"

	"github.com/padrun/padrun/marker"
	"github.com/padrun/padrun/wrapper/harness"
)

// A harness that writes an in-use lock of its own into a session's folder
// when it opens the session (copilot, harness.Plan.InUseClaims) names the
// session it picked itself: --continue among several, a prefix, a name,
// its picker, the TUI's /resume. The lock comes before its first append,
// so a lock that the run's own tree writes is the run's claim of that
// session (docs/spec.md §4.6): taken at once, and refused, the harness is
// ended before it appends. A session it switches away from stays held to
// the end of the run: copilot may still write to it after its lock goes.

// claimInUse judges the session folder dir after a change in it: a live
// in-use lock of the run's tree there is a claim of its session file.
func (s *session) claimInUse(dir string) {
	file, err := CanonicalFile(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		return
	}
	locks, _ := harness.InUseLocks(file)
	ours := slices.ContainsFunc(locks, func(l harness.InUseLock) bool { return ofTree(l.Pid, s.self.Pid) })
	if !ours {
		return
	}
	s.mu.Lock()
	defer s.unlock()
	if s.rec == nil {
		return // the run has ended
	}
	if s.inUse.claimed(file) {
		return
	}
	err = s.take(file, filepath.Base(dir))
	if err != nil {
		// The harness has opened a session another one holds: it is
		// ended before it appends, and padrun exits with the refusal. The
		// lock it leaves, killed, is removed with the run's own (inuse.go):
		// it is proven the run's first, while its writer lives, for once
		// killed and reaped, its pid proves nothing.
		for _, l := range locks {
			s.inUse.owns(file, l)
		}
		s.stopHarness(err)
		s.o.Log.Debug().Err(err).Str("file", file).Msg("the session the harness opened is not claimed: the harness is ended before it writes")
		return
	}
	s.inUse.claim(file)
	s.current = file
	s.o.Log.Info().Str("file", file).Msg("claimed the session the harness opened (its own in-use lock)")
}

// watchInUseClaims watches the session folders under the plan's
// InUseClaims folder for the in-use locks the run's tree writes, from
// before the child starts. Call stop before cleanup.
func (s *session) watchInUseClaims(plan harness.Plan) (stop func()) {
	if plan.InUseClaims == "" {
		return func() {}
	}
	n := startClaimNotify(plan.InUseClaims, s.claimInUse)
	if n == nil {
		s.o.Log.Warn().Str("harness", plan.Harness).Msg("cannot watch " + plan.Harness + "'s in-use locks: the sessions it opens itself are unguarded")
		return func() {}
	}
	return n.stop
}

// heldLeases are the session folders under the plan's InUseClaims folder
// whose session file has a marker beside it (another run holds it, or
// did), to lease with the plan's own (lease_linux.go). The in-use lock
// races the harness's append: copilot 1.0.40 appends to a session it
// resumes some 50-150 ms after its lock, and under load padrun saw the
// lock after the append. Leased, the harness's first open of such a file
// for writing waits in open(2) until padrun has claimed it, and a refused
// claim ends the harness before the open returns. A session another run
// takes after this one started has only the lock's race.
func heldLeases(plan harness.Plan) []harness.Watch {
	if plan.InUseClaims == "" {
		return nil
	}
	ents, _ := os.ReadDir(plan.InUseClaims)
	var ws []harness.Watch
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(plan.InUseClaims, e.Name())
		if _, err := os.Lstat(marker.Path(filepath.Join(dir, "events.jsonl"))); err == nil {
			ws = append(ws, harness.Watch{Dir: dir, Pattern: "events.jsonl"})
		}
	}
	return ws
}
