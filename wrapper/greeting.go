package wrapper

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/padrun/padrun/supervise/cgroup"
	"github.com/padrun/padrun/wrapper/harness"
	"github.com/padrun/padrun/wrapper/watch"
)

// DefaultGreeting is how long a companion has to greet its padrun (docs/spec.md
// §4.5) once nothing can hold the harness up but its own start, not
// counting the time its tree waited for a CPU or for I/O (cgroup.Clock). Measured from
// the child's start on a 2-core machine at load 10: pi 0.74.2 1.4-7 s (the
// first run cold), pi 1.6.0 0.5 s, claude 2.1.197 and 2.1.332 0.4-1.6 s, and
// 4 s for claude -p reading its prompt from a pipe; the rest is room for a
// machine more loaded still, since --strict stops the harness at the end.
const DefaultGreeting = 20 * time.Second

// greeting follows a companion that was asked for until it greets its
// padrun, which it does over the control socket before its harness writes a
// session file (pi's extension when pi loads it, claude's SessionStart
// hook). Until then the folder watch of docs/spec.md §4.4 runs as it does for a
// harness without a companion, so that a harness that ignores the companion
// still has its new sessions claimed; once it greets, the watch stops and
// the companion claims.
//
// "Never greeted" is decided when the clock runs out, or at the child's end
// once the watch has claimed a file for it. The clock starts where nothing
// but the harness's own start can delay the greeting: at the child's start
// in print, json and rpc modes; in interactive mode at the first new session
// file the watch claims for the child, since a picker, a first-run set-up or
// a trust question may keep a person busy before the harness loads its
// companion. A new file before the greeting is no proof by itself: pi
// --fork writes its fork before it loads extensions (pi 1.6.0 main.js,
// createSessionManager before createRuntime).
type greeting struct {
	harness     string        // the harness whose companion it is
	loadedBy    string        // how padrun asked the harness to load it
	wait        time.Duration // the clock
	interactive bool          // the clock waits for the first claimed file
	// served: a server's companion loads with the first session it serves
	// (opencode's and kilo's serve, web and acp load plugins per project
	// on its first request), which padrun cannot see: no clock, and at the
	// server's end a companion that never greeted is said to.
	served     bool
	deferWarn  bool   // say it once the harness's screen is gone
	database   bool   // sessions are rows of a database: no folder watch
	startLocks string // harness.Plan.StartLocks
	server     string // the database the harness's TUI server opens before its plugins load; "" for none
	root       int    // padrun's pid: the harness's start is of its tree
	strict     bool   // --strict: never greeting is a refusal
	log        zerolog.Logger
	// refuse stops the run under --strict: the child at once while it
	// still runs, else at padrun's exit. It is called holding mu.
	refuse func(err *UsageError, running bool)
	// stalled is how long the harness's tree has waited, in all, for a
	// CPU or for I/O (the session cgroup's pressure); nil or 0 where it
	// cannot be read.
	stalled func() time.Duration

	muted atomic.Bool // the watch's unowned files are the companion's business now

	// mu guards the rest: nothing of the session is locked under it but
	// by refuse.
	mu        sync.Mutex
	stopWatch func()
	greeted   bool
	decided   bool
	claimed   bool
	timer     *time.Timer
	held      bool         // the clock ran out while the harness's start held the companion back
	serverBy  time.Time    // until when the clock's start waits for the TUI's server to open its database
	clock     cgroup.Clock // from its start; the harness's waits for the machine are not counted
	ended     bool         // the child has ended: the clock runs no more
	later     string       // the warning, said after the harness's screen
}

// armGreeting starts following the companion of this run, if one was asked
// for, before the watch starts.
func (s *session) armGreeting(r *run) {
	if r.companion == "" {
		return
	}
	wait := s.o.Greeting
	if wait <= 0 {
		wait = DefaultGreeting
	}
	a, _ := harness.Lookup(r.companion)
	// No file shows a database harness's session: its clock starts with
	// the child, whose plugins load as it starts, before any screen; a
	// server's load with the first session it serves (served).
	interactive := r.plan.Mode == harness.ModeInteractive && !a.Sessions.Database
	served := r.plan.Mode == harness.ModeRPC && a.Sessions.Database
	// opencode's and kilo's TUI starts its server in a worker once its
	// screen is up, and plugins load only when that server has opened the
	// database and set up the project (measured at load 16-20 on 2 cores:
	// opencode 1.17.19 opened it 12.5 s after its start and greeted at
	// 22 s, where run greeted at 3-11 s).
	server := ""
	if r.plan.Mode == harness.ModeInteractive && a.Sessions.Database {
		server = sessionsDB(r.plan.CompanionEnv)
	}
	s.greet = &greeting{harness: r.companion, loadedBy: a.Companion.LoadedBy, wait: wait, server: server,
		interactive: interactive, served: served, deferWarn: r.plan.Mode == harness.ModeInteractive && isTerminal(s.o.Stderr), database: a.Sessions.Database,
		startLocks: r.plan.StartLocks, root: s.self.Pid, strict: s.o.Strict, log: s.o.Log, refuse: s.refuseUngreeted,
		stalled: func() time.Duration { return s.cg.Stalled() }}
}

// refuseUngreeted stops the run whose companion never greeted, under
// --strict: the child at once while it still runs.
func (s *session) refuseUngreeted(err *UsageError, running bool) {
	if !running {
		s.keepWhy(err)
		return
	}
	s.stopHarness(err)
}

// muting reports whether the companion greeted: the watch's unowned files
// are its business now. False without a companion.
func (g *greeting) muting() bool { return g != nil && g.muted.Load() }

// setWatch names how to stop the fallback watch.
func (g *greeting) setWatch(stop func()) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.stopWatch = stop
	if g.greeted && !g.decided {
		go stop()
	}
}

// started starts the clock of a non-interactive run (or of a database
// harness's TUI, once its server has opened the database): the child has
// just started.
func (g *greeting) started() {
	if g == nil || g.interactive || g.served {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.server != "" && g.timer == nil {
		g.serverBy = time.Now().Add(g.wait)
		g.timer = time.AfterFunc(startPoll, g.serverPoll)
		return
	}
	g.startClock()
}

// startClock starts the clock once. The caller holds g.mu.
func (g *greeting) startClock() {
	if g.timer != nil || g.greeted || g.decided {
		return
	}
	g.restartClock()
	g.timer = time.AfterFunc(g.wait, g.clockOut)
}

// restartClock counts the clock from now. The caller holds g.mu.
func (g *greeting) restartClock() {
	g.clock = cgroup.StartClock(g.wait, g.stalled)
}

// startPoll is how often a clock that ran out while the harness's start
// held its companion back looks again.
const startPoll = 250 * time.Millisecond

// serverPoll looks, until the TUI's server has opened its database, for
// that open, then starts the clock in full; after a full clock without it,
// the clock starts anyway.
func (g *greeting) serverPoll() {
	open := watch.TreeOpens(g.server, g.root)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.greeted || g.decided || g.ended {
		return
	}
	if !open && time.Now().Before(g.serverBy) {
		g.timer.Reset(startPoll)
		return
	}
	g.log.Debug().Str("harness", g.harness).Bool("opened", open).Msg("the companion's clock starts: the harness's server is up")
	g.restartClock()
	g.timer = time.AfterFunc(g.wait, g.clockOut)
}

// clockOut is the end of the clock. The time the harness's tree waited for
// a CPU or for I/O is not counted (cgroup.Clock). While the harness's start still holds
// the companion back (a lock of the child's tree in harness.Plan.StartLocks:
// opencode installing its plugin package, at a first start or on a slow
// network), no companion could have greeted yet: the clock waits, then runs
// again in full from the moment the companion could first load.
func (g *greeting) clockOut() {
	busy := startLocked(g.startLocks, g.root)
	g.mu.Lock()
	if g.greeted || g.decided || g.ended {
		g.mu.Unlock()
		return
	}
	left := g.clock.Left()
	switch {
	case busy:
		if !g.held {
			g.log.Debug().Str("harness", g.harness).Str("locks", g.startLocks).Msg("the companion's clock waits: the harness's start holds it back")
		}
		g.held = true
		g.timer.Reset(startPoll)
	case g.held:
		g.held = false
		g.restartClock()
		g.timer.Reset(g.wait)
	case left > 0:
		g.log.Debug().Str("harness", g.harness).Dur("left", left).Msg("the companion's clock goes on: the harness waited for the machine")
		g.timer.Reset(left)
	default:
		g.mu.Unlock()
		g.neverGreeted(fmt.Sprintf("did not greet padrun within %s", g.wait), true)
		return
	}
	g.mu.Unlock()
}

// sessionsDB is the database whose sessions' guards' folder the companion
// is given ($PADRUN_SESSIONS, .<db>.padrun beside it); "" without one.
func sessionsDB(env []string) string {
	for _, kv := range env {
		if dir, ok := strings.CutPrefix(kv, "PADRUN_SESSIONS="); ok {
			base := filepath.Base(dir)
			if name, ok := strings.CutPrefix(strings.TrimSuffix(base, ".padrun"), "."); ok && name != "" && strings.HasSuffix(base, ".padrun") {
				return filepath.Join(filepath.Dir(dir), name)
			}
		}
	}
	return ""
}

// startLocked reports whether a process of root's tree holds a lock in
// dir, where each lock is a folder NAME.lock whose meta.json names its
// holder's pid.
func startLocked(dir string, root int) bool {
	if dir == "" {
		return false
	}
	locks, _ := filepath.Glob(filepath.Join(dir, "*.lock", "meta.json")) // Best effort: no folder, no lock.
	for _, m := range locks {
		b, err := os.ReadFile(m)
		if err != nil {
			continue // released meanwhile
		}
		var meta struct {
			Pid int `json:"pid"`
		}
		if json.Unmarshal(b, &meta) == nil && meta.Pid > 0 && ofTree(meta.Pid, root) {
			return true
		}
	}
	return false
}

// hello marks the companion as greeted: any request it sends does.
func (g *greeting) hello() {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.greeted {
		return
	}
	g.greeted = true
	if g.decided {
		g.log.Info().Str("harness", g.harness).Msg("the companion greeted padrun late: the folder watch goes on")
		return
	}
	if g.timer != nil {
		g.timer.Stop()
	}
	g.log.Debug().Str("harness", g.harness).Msg("the companion greeted padrun")
	// The companion claims from now on. The watch may be waiting for the
	// session to claim a file: it stops on its own goroutine.
	g.muted.Store(true)
	if g.stopWatch != nil {
		go g.stopWatch()
	}
}

// watchClaimed is told that the watch claimed a new session file for the
// child.
func (g *greeting) watchClaimed() {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.claimed = true
	if g.interactive {
		g.startClock()
	}
}

// childEnded decides, at the child's end, for a companion that never
// greeted while its harness wrote a new session.
func (g *greeting) childEnded() {
	if g == nil {
		return
	}
	g.mu.Lock()
	g.ended = true
	if g.timer != nil {
		g.timer.Stop()
	}
	claimed := g.claimed || g.served
	g.mu.Unlock()
	if claimed {
		g.neverGreeted("never greeted padrun", false)
	}
}

// neverGreeted decides, once, that the companion did not greet: a warning,
// or under --strict a refusal, which ends the child when it still runs.
func (g *greeting) neverGreeted(what string, running bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.greeted || g.decided {
		return
	}
	g.decided = true
	why := fmt.Sprintf("%s's companion %s (%s ignored %s, could not load it, or is not %s)", g.harness, what, g.harness, g.loadedBy, g.harness)
	if g.strict {
		err := &UsageError{Err: fmt.Errorf("%s and --strict is set: %s was stopped", why, g.harness),
			Advice: "run the " + g.harness + " padrun was tested with (padrun version lists them), or run without --strict to go on with the folder watch"}
		if !running {
			err.Err = fmt.Errorf("%s and --strict is set; the session files it created were claimed by the folder watch", why)
		}
		g.refuse(err, running)
		return
	}
	msg := why + ": session switches inside " + g.harness + " are unguarded; its new session files are claimed by the folder watch"
	if g.database {
		msg = why + ": the sessions " + g.harness + " picks or makes itself (-c, new ones) are unguarded"
	}
	if g.deferWarn {
		g.later = msg
		return
	}
	g.log.Warn().Str("harness", g.harness).Msg(msg)
}

// remind returns what says, once an interactive harness on a terminal has
// ended, that its companion never greeted: said while the harness drew its
// screen, it would have been drawn over.
func (g *greeting) remind() func() {
	return func() {
		if g == nil {
			return
		}
		g.mu.Lock()
		msg := g.later
		g.mu.Unlock()
		if msg != "" {
			g.log.Warn().Str("harness", g.harness).Msg(msg)
		}
	}
}
