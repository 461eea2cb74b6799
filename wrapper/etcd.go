package wrapper

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"sync"
	"time"

	"github.com/padrun/padrun/marker/etcdhold"
	"github.com/padrun/padrun/supervise"
	"github.com/padrun/padrun/supervise/reap"
)

// FencedError says the session was stopped because its hold in etcd was
// lost, or could not be kept: Why says what happened.
type FencedError struct {
	Key   string
	Lease string
	Why   string
}

func (e *FencedError) Error() string {
	return "etcd: lost the hold on " + e.Key + " (lease " + e.Lease + "): " + e.Why
}

// Hint says what to run.
func (e *FencedError) Hint() string {
	return "once etcd answers again, run the same command again (with --wait to queue behind a session another machine started meanwhile)"
}

// etcdHold is the run's hold in etcd, beside the local one: its keys, of
// the held set, are guarded by the session's mu; its lease by a lock of its
// own.
type etcdHold struct {
	c    *etcdhold.Client
	keys []string          // every key the run holds, or will once taken
	of   map[string]string // each held file's key
	// byPath are the held files keyed by their path: an id they write
	// later is held too, as soon as it is read.
	byPath map[string]bool
	file   string // the guarded file refusals name, or ""
	hold   *etcdhold.Hold

	lease etcdLease
}

// etcdLease is the run's lease as the keepalive keeps it, and the fence
// that stops the session before it can expire. mu guards it, but ttl, set
// once, and the fencing job's own flags.
type etcdLease struct {
	ttl time.Duration

	mu        sync.Mutex
	safeUntil time.Time // the lease cannot have expired before then
	safeClock int64     // safeUntil on the fence's clock (fenceClock)
	lost      error     // the lease is gone: set by the keepalive
	stopKeep  func()
	fence     *fenceProc // the fence process, where there is one

	// Of the fencing job, on the supervisor's goroutine only.
	reaped, termed, killed bool
}

// taken starts the lease's clock: the hold was asked for at start, start
// on the fence's clock, and the lease lives at least a TTL past it.
func (l *etcdLease) taken(start time.Time, startClock int64, stopKeep func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.safeUntil, l.safeClock, l.stopKeep = start.Add(l.ttl), startClock+int64(l.ttl), stopKeep
}

// until is when the lease can first have expired.
func (l *etcdLease) until() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.safeUntil
}

// renewed moves the deadline on after a renewal sent at sent (sentClock on
// the fence's clock) that got ttl seconds, and tells the fence; an earlier
// deadline than the one known changes nothing.
func (l *etcdLease) renewed(sent time.Time, sentClock, ttl int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if u := sent.Add(time.Duration(ttl) * time.Second); u.After(l.safeUntil) {
		l.safeUntil = u
	}
	if u := sentClock + ttl*int64(time.Second); u > l.safeClock {
		l.safeClock = u
		l.fence.send("until %d", u-int64(l.ttl/6))
	}
}

// gone records that the lease is gone.
func (l *etcdLease) gone(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lost = err
}

// startFence starts the fence process of the session whose cgroup is cg
// ("" for none), to the deadline known now.
func (l *etcdLease) startFence(cg string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	f, err := startFence(cg, l.safeClock-int64(l.ttl/6), l.ttl/15)
	if err != nil {
		return err
	}
	l.fence = f
	return nil
}

// tell writes a line to the fence, where there is one.
func (l *etcdLease) tell(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.fence.send(format, args...)
}

// takeFence is the fence, which the caller ends; nil when there is none
// (any more).
func (l *etcdLease) takeFence() *fenceProc {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.fence
	l.fence = nil
	return f
}

// fenceAct is what the fencing job does now.
type fenceAct int

const (
	fenceWait fenceAct = iota
	fenceTerm          // TERM, then KILL at killAt
	fenceKill
)

// judge is the fencing job's rule at now: TERM a third of the TTL before
// the earliest expiry, unless the child was reaped; KILL a sixth before it,
// or at once once the lease is gone; each once. It says when to look again,
// at least every fifteenth of the TTL, and judges by the wall clock too:
// Go's timers and monotonic clock stop while the machine is suspended, the
// lease's TTL does not. On the supervisor's goroutine only.
func (l *etcdLease) judge(now time.Time) (act fenceAct, killAt time.Time, next time.Duration) {
	l.mu.Lock()
	until, lost := l.safeUntil, l.lost
	l.mu.Unlock()
	ttl := l.ttl
	termAt, killAt := until.Add(-ttl/3), until.Add(-ttl/6)
	wall := now.Round(0)
	past := func(t time.Time) bool { return !now.Before(t) || !wall.Before(t.Round(0)) }
	next = termAt.Sub(now)
	switch {
	case lost != nil || past(killAt):
		if !l.killed {
			l.killed, act = true, fenceKill
		}
		next = ttl / 6
	case past(termAt):
		if !l.termed && !l.reaped {
			l.termed, act = true, fenceTerm
		}
		next = killAt.Sub(now)
	}
	return act, killAt, max(min(next, ttl/15), time.Millisecond)
}

// prepareEtcd readies the hold in etcd when --etcd is given: a key for
// every file the run guards (EtcdKey; --session-key and the harness's id
// name the harness's session file, else the first --guard file), or the
// session key alone when it guards none.
func (s *session) prepareEtcd(r *run) error {
	if s.o.Etcd == nil {
		return nil
	}
	cfg := *s.o.Etcd
	cfg.Spawn = ownChildren{} // the run reaps the session's orphans
	c, err := etcdhold.New(cfg)
	if err != nil {
		return &UsageError{Err: err}
	}
	e := &etcdHold{c: c, of: map[string]string{}, byPath: map[string]bool{}}
	e.lease.ttl = c.TTL()
	main := s.current
	if main == "" && len(s.o.Guards) > 0 {
		main, _ = CanonicalFile(s.o.Guards[0])
	}
	for _, f := range r.files {
		key, id := "", FileSessionID(f)
		if f == main {
			if r.plan.SessionID != "" {
				id = r.plan.SessionID
			}
			key = EtcdKey(c, s.o.SessionKey, id, f)
		} else {
			key = EtcdKey(c, "", id, f)
		}
		e.byPath[f] = key == EtcdKey(c, "", "", f)
		e.of[f] = key
		if !slices.Contains(e.keys, key) {
			e.keys = append(e.keys, key)
		}
	}
	if len(r.files) == 0 && (s.o.SessionKey != "" || r.plan.SessionID != "") {
		e.keys = []string{EtcdKey(c, s.o.SessionKey, r.plan.SessionID, "")}
	}
	// A new session is named only once the harness makes it: its claim
	// takes its key then, before the file is written.
	if len(e.keys) == 0 && r.ctlDir == "" && len(r.plan.Watch) == 0 {
		return &UsageError{Err: errors.New("--etcd: nothing names this session for other machines"),
			Advice: "name it: padrun --etcd ... --session-key KEY -- COMMAND (or --guard the session file)"}
	}
	if main != "" {
		e.file = main
	} else if len(r.files) > 0 {
		e.file = r.files[0]
	}
	s.etcd = e
	return nil
}

// holdKey holds file in etcd under key too, under the run's lease, before
// the harness writes it (a claim inside the harness, a file claimed by the
// watch, an id learned from its header). The caller holds s.mu. A key held
// elsewhere is a *etcdhold.HeldError.
func (s *session) holdKey(file, key string) error {
	e := s.etcd
	if e.hold == nil {
		e.keys = append(e.keys, key) // taken with the others
		e.of[file] = key
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), e.c.TTL()/3)
	defer cancel()
	if err := e.hold.Add(ctx, key); err != nil {
		var held *etcdhold.HeldError
		if errors.As(err, &held) {
			held.File = file
		}
		return err
	}
	e.of[file] = key
	s.o.Log.Debug().Str("file", file).Str("key", key).Msg("etcd: held")
	return nil
}

// claimEtcd holds a file the run takes while it runs under its key:
// sessionID, else the id the file names, else its path. The caller holds
// s.mu.
func (s *session) claimEtcd(file, sessionID string) error {
	e := s.etcd
	if e == nil {
		return nil
	}
	if sessionID == "" {
		sessionID = FileSessionID(file)
	}
	key := EtcdKey(e.c, "", sessionID, file)
	if err := s.holdKey(file, key); err != nil {
		return err
	}
	e.byPath[file] = sessionID == ""
	return nil
}

// learnEtcd holds the id a file keyed by its path names once the harness
// has written it (docs/spec.md §15): held elsewhere, the hold is lost and
// the session is stopped. The caller holds s.mu.
func (s *session) learnEtcd(file, id string) {
	e := s.etcd
	if e == nil || !e.byPath[file] {
		return
	}
	if id == "" {
		id = FileSessionID(file)
	}
	if id == "" {
		return
	}
	key := EtcdKey(e.c, "", id, file)
	err := s.holdKey(file, key)
	if err == nil {
		e.byPath[file] = false
		return
	}
	why := "the session's id " + id + ", written by the harness after the start, cannot be held: " + err.Error()
	if held := etcdHeld(err); held != nil {
		why = "the session's id " + id + ", written by the harness after the start, is held in etcd by another session (" + err.Error() + "): the session was stopped"
	}
	s.o.Log.Error().Str("file", file).Msg("lost the hold in etcd: " + why)
	s.fencedChild(s.fencedError(why), false, true)
}

// dropEtcd deletes the key of a file the harness has left. The caller
// holds s.mu.
func (s *session) dropEtcd(file string) {
	e := s.etcd
	if e == nil || e.hold == nil {
		return
	}
	key, ok := e.of[file]
	delete(e.of, file)
	for _, k := range e.of {
		if k == key {
			return // another held file has the same key
		}
	}
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), e.c.TTL()/3)
	defer cancel()
	if err := e.hold.Drop(ctx, key); err != nil {
		s.o.Log.Warn().Err(err).Msg("release in etcd: the key goes when the lease expires")
	}
}

// takeEtcd takes the keys once the local hold is taken: on failure it
// releases that too, so the run holds both or neither.
func (s *session) takeEtcd(ctx context.Context) error {
	e := s.etcd
	if e == nil {
		return nil
	}
	h := etcdhold.Holder{Marker: s.proto}
	h.SessionFile = e.file
	start, startClock := time.Now(), fenceClock()
	hold, err := e.c.Take(ctx, e.keys, h)
	if err != nil {
		s.release()
		var held *etcdhold.HeldError
		if errors.As(err, &held) && e.file != "" {
			held.File = e.file
		}
		return err
	}
	e.hold = hold
	kctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	e.lease.taken(start, startClock, sync.OnceFunc(func() { cancel(); <-done }))
	go func() {
		defer close(done)
		s.keepAlive(kctx)
	}()
	s.o.Log.Debug().Strs("keys", e.keys).Str("lease", etcdhold.LeaseHex(hold.Lease)).Msg("etcd: held")
	return nil
}

// etcdHeld is the key a refusal found held in etcd, or nil.
func etcdHeld(err error) *etcdhold.Found {
	var held *etcdhold.HeldError
	if errors.As(err, &held) {
		return held.Found
	}
	return nil
}

// keepAlive renews the lease every third of its TTL, sooner after a
// failure, until ctx ends. Each success moves the deadline the fencing
// job works to: the lease lives at least a TTL past the renewal's sending.
func (s *session) keepAlive(ctx context.Context) {
	e := s.etcd
	ttl := e.c.TTL()
	failing := false
	for {
		next := e.lease.until().Add(-ttl).Add(ttl / 3)
		if failing {
			next = time.Now().Add(ttl / 15)
		}
		if sleep(ctx, time.Until(next)) != nil {
			return
		}
		sent, sentClock := time.Now(), fenceClock()
		// Bounded, so that a failing renewal is said while there is time.
		actx, cancel := context.WithTimeout(ctx, ttl/3)
		got, err := e.hold.KeepAlive(actx)
		cancel()
		switch {
		case ctx.Err() != nil:
			return
		case errors.Is(err, etcdhold.ErrLeaseGone):
			e.lease.gone(err)
			s.fenceNow("the lease expired or was revoked: the session was killed at once (another machine may hold the key now)")
			return
		case err != nil:
			if !failing {
				until := e.lease.until()
				s.o.Log.Error().Err(err).Msg(fmt.Sprintf("cannot keep the lease in etcd alive: unless etcd answers, the session is stopped at %s, before the lease can expire at %s",
					until.Add(-ttl/3).Format("15:04:05.000"), until.Format("15:04:05.000")))
			}
			failing = true
		default:
			if failing {
				s.o.Log.Warn().Msg("etcd answers again: the lease is kept alive")
			}
			failing = false
			e.lease.renewed(sent, sentClock, got)
			s.learnPathKeyed()
		}
	}
}

// learnPathKeyed holds the ids that files keyed by their path have come
// to name, for the files no watch sees written: at each renewal.
func (s *session) learnPathKeyed() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for f, byPath := range s.etcd.byPath {
		if byPath && s.heldLocked(f) {
			s.learnEtcd(f, "")
		}
	}
}

// startFence starts the session's fence process once the hold is taken,
// before the child: a fence that cannot start is an error, never a session
// without it.
func (s *session) startFence() error {
	e := s.etcd
	if e == nil {
		return nil
	}
	cg := ""
	if s.cg != nil {
		cg = s.cg.Path
	}
	if err := e.lease.startFence(cg); err != nil {
		return fmt.Errorf("etcd: start the session's fence: %w", err)
	}
	return nil
}

// fenceChild names the child to the fence.
func (s *session) fenceChild(child *supervise.Child) {
	if e := s.etcd; e != nil {
		e.lease.tell("child %d %d", child.Pid, child.Pgid)
	}
}

// endFence ends the fence once the child has ended; when the fence killed
// it, its words say what happened. The caller holds s.mu.
func (s *session) endFence() {
	e := s.etcd
	if e == nil {
		return
	}
	if why := e.lease.takeFence().end(); why != "" {
		s.o.Log.Error().Msg("lost the hold in etcd: " + why)
		s.fencedChild(s.fencedError(why), true, false) // the fence saw what happened: its words
	}
}

// fenceNow kills the session at once: its key may be another's already.
func (s *session) fenceNow(why string) {
	s.o.Log.Error().Msg("lost the hold in etcd: " + why + ": killing the session")
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fencedChild(s.fencedError(why), false, true)
}

// fenced records why the session was stopped; under s.mu.
func (s *session) fenced(why string) { s.fencedChild(s.fencedError(why), false, false) }

// fencedError is the hold in etcd lost for why; under s.mu.
func (s *session) fencedError(why string) *FencedError {
	lease := ""
	if s.etcd.hold != nil {
		lease = etcdhold.LeaseHex(s.etcd.hold.Lease)
	}
	key := "the session"
	if len(s.etcd.keys) > 0 {
		key = s.etcd.keys[0]
	}
	return &FencedError{Key: key, Lease: lease, Why: why}
}

// fence is the job that stops the session before its lease can expire
// when it cannot be kept alive, as etcdLease.judge rules, so the child is
// gone before another machine can take the key. It reschedules itself.
func (s *session) fence(child *supervise.Child) supervise.Job {
	l := &s.etcd.lease
	return supervise.Job{Run: func(now time.Time) time.Duration {
		act, killAt, next := l.judge(now)
		switch act {
		case fenceKill:
			s.o.Log.Error().Msg("lost the hold in etcd: the lease was not renewed in time: killing the session")
			s.mu.Lock()
			s.fenced("etcd did not renew the lease in time: the session was stopped before the lease could expire")
			s.mu.Unlock()
			child.Kill()
		case fenceTerm:
			s.o.Log.Error().Msg(fmt.Sprintf("lost the hold in etcd: the lease was not renewed: ending the session (TERM, then KILL at %s)", killAt.Format("15:04:05.000")))
			s.mu.Lock()
			s.fenced("etcd did not renew the lease in time: the session was stopped before the lease could expire")
			s.mu.Unlock()
			child.Terminate()
		}
		return next
	}}
}

// releaseEtcd stops the keepalive, then deletes our keys and revokes the
// lease. Processes of the session that outlived padrun keep the lease
// until it expires, a TTL from now.
func (s *session) releaseEtcd() {
	e := s.etcd
	if e == nil || e.hold == nil {
		return
	}
	e.lease.takeFence().end() // a run that ended before its child started
	e.lease.stopKeep()
	if len(s.left) > 0 {
		s.o.Log.Warn().Msg("processes of the session outlived it: its key in etcd stays until the lease expires")
		e.hold = nil
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), e.c.TTL()/3)
	defer cancel()
	if err := e.hold.Release(ctx); err != nil {
		s.o.Log.Warn().Err(err).Msg("release in etcd: the key goes when the lease expires")
	}
	e.hold = nil
}

// ownChildren starts and waits for padrun's own children through
// supervise/reap, so that the supervisor's reaping of the session's orphans
// leaves their exits to their Wait.
type ownChildren struct{}

func (ownChildren) Start(cmd *exec.Cmd) error { return reap.Start(cmd) }
func (ownChildren) Wait(cmd *exec.Cmd) error  { return reap.Wait(cmd) }
