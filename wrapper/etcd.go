package wrapper

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/padrun/padrun/marker/etcdhold"
	"github.com/padrun/padrun/supervise"
)

// FencedError says the session was stopped because its lease in etcd could
// not be kept alive: another machine may take the key once it expires.
type FencedError struct {
	Key   string
	Lease string
	Why   string
}

func (e *FencedError) Error() string {
	return "etcd: lost the hold on " + e.Key + " (lease " + e.Lease + "): " + e.Why + "; the session was stopped before the lease could expire"
}

// Hint says what to run.
func (e *FencedError) Hint() string {
	return "once etcd answers again, run the same command again (with --wait to queue behind a session another machine started meanwhile)"
}

// etcdHold is the run's hold in etcd, beside the local one.
type etcdHold struct {
	c    *etcdhold.Client
	keys []string
	file string // the guarded file refusals name, or ""
	hold *etcdhold.Hold

	mu        sync.Mutex
	safeUntil time.Time // the lease cannot have expired before then
	lost      error     // the lease is gone: set by the keepalive
	stopKeep  func()

	// Of the fencing job, on the supervisor's goroutine only.
	reaped, termed, killed bool
}

// prepareEtcd readies the hold in etcd when --etcd is given: its keys are
// the session id, else --session-key, else the guarded files' paths.
func (s *session) prepareEtcd(r *run) error {
	if s.o.Etcd == nil {
		return nil
	}
	c, err := etcdhold.New(*s.o.Etcd)
	if err != nil {
		return &UsageError{Err: err}
	}
	e := &etcdHold{c: c}
	switch {
	case r.plan.SessionID != "":
		e.keys = []string{c.Key(r.plan.SessionID)}
	case s.o.SessionKey != "":
		e.keys = []string{c.Key(s.o.SessionKey)}
	default:
		for _, f := range r.files {
			e.keys = append(e.keys, c.Key(strings.TrimPrefix(f, "/")))
		}
	}
	if len(e.keys) == 0 {
		return &UsageError{Err: errors.New("--etcd: nothing names this session for other machines"),
			Advice: "name it: padrun --etcd ... --session-key KEY -- COMMAND (or --guard the session file)"}
	}
	if len(r.files) > 0 {
		e.file = r.files[0]
	}
	s.etcd = e
	return nil
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
	start := time.Now()
	hold, err := e.c.Take(ctx, e.keys, h)
	if err != nil {
		s.release()
		var held *etcdhold.HeldError
		if errors.As(err, &held) && e.file != "" {
			held.File = e.file
		}
		return err
	}
	e.hold, e.safeUntil = hold, start.Add(e.c.TTL())
	kctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.keepAlive(kctx)
	}()
	e.stopKeep = sync.OnceFunc(func() { cancel(); <-done })
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
		e.mu.Lock()
		next := e.safeUntil.Add(-ttl).Add(ttl / 3)
		e.mu.Unlock()
		if failing {
			next = time.Now().Add(ttl / 15)
		}
		if sleep(ctx, time.Until(next)) != nil {
			return
		}
		sent := time.Now()
		// Bounded, so that a failing renewal is said while there is time.
		actx, cancel := context.WithTimeout(ctx, ttl/3)
		got, err := e.hold.KeepAlive(actx)
		cancel()
		switch {
		case ctx.Err() != nil:
			return
		case errors.Is(err, etcdhold.ErrLeaseGone):
			e.mu.Lock()
			e.lost = err
			e.mu.Unlock()
			s.fenceNow("the lease expired or was revoked")
			return
		case err != nil:
			if !failing {
				e.mu.Lock()
				until := e.safeUntil
				e.mu.Unlock()
				s.o.Log.Error().Err(err).Msg(fmt.Sprintf("cannot keep the lease in etcd alive: unless etcd answers, the session is stopped at %s, before the lease can expire at %s",
					until.Add(-ttl/3).Format("15:04:05.000"), until.Format("15:04:05.000")))
			}
			failing = true
		default:
			if failing {
				s.o.Log.Warn().Msg("etcd answers again: the lease is kept alive")
			}
			failing = false
			e.mu.Lock()
			if u := sent.Add(time.Duration(got) * time.Second); u.After(e.safeUntil) {
				e.safeUntil = u
			}
			e.mu.Unlock()
		}
	}
}

// fenceNow kills the session at once: its key may be another's already.
func (s *session) fenceNow(why string) {
	s.o.Log.Error().Msg("lost the hold in etcd: " + why + ": killing the session")
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fenced(why)
	if s.kill != nil {
		s.kill()
	}
}

// fenced records why the session was stopped; under s.mu.
func (s *session) fenced(why string) {
	if _, ok := s.stopped.(*FencedError); ok {
		return
	}
	s.stopped = &FencedError{Key: s.etcd.keys[0], Lease: etcdhold.LeaseHex(s.etcd.hold.Lease), Why: why}
}

// fence is the job that stops the session before its lease can expire
// when it cannot be kept alive: TERM a third of the TTL before the
// earliest expiry, KILL a sixth before it, so the child is gone before
// another machine can take the key. It reschedules itself, at least every
// fifteenth of the TTL, and judges by the wall clock too: Go's timers and
// monotonic clock stop while the machine is suspended, the lease's TTL
// does not.
func (s *session) fence(child *supervise.Child) supervise.Job {
	e := s.etcd
	ttl := e.c.TTL()
	return supervise.Job{Run: func(now time.Time) time.Duration {
		e.mu.Lock()
		until, lost := e.safeUntil, e.lost
		e.mu.Unlock()
		termAt, killAt := until.Add(-ttl/3), until.Add(-ttl/6)
		wall := now.Round(0)
		past := func(t time.Time) bool { return !now.Before(t) || !wall.Before(t.Round(0)) }
		next := termAt.Sub(now)
		switch {
		case lost != nil || past(killAt):
			if !e.killed {
				e.killed = true
				s.o.Log.Error().Msg("lost the hold in etcd: the lease was not renewed in time: killing the session")
				s.mu.Lock()
				s.fenced("etcd did not renew the lease in time")
				s.mu.Unlock()
				child.Kill()
			}
			next = ttl / 6
		case past(termAt):
			if !e.termed && !e.reaped {
				e.termed = true
				s.o.Log.Error().Msg(fmt.Sprintf("lost the hold in etcd: the lease was not renewed: ending the session (TERM, then KILL at %s)", killAt.Format("15:04:05.000")))
				s.mu.Lock()
				s.fenced("etcd did not renew the lease in time")
				s.mu.Unlock()
				child.Terminate()
			}
			next = killAt.Sub(now)
		}
		return max(min(next, ttl/15), time.Millisecond)
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
	e.stopKeep()
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
