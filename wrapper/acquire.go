package wrapper

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/padrun/padrun/marker/ident"

	"github.com/padrun/padrun/marker"
)

// notify registers sigs, except those ignored at start: they stay ignored,
// for padrun and, through exec, for its child.
func notify(c chan<- os.Signal, sigs []os.Signal) {
	for _, s := range sigs {
		if !signal.Ignored(s) {
			signal.Notify(c, s)
		}
	}
}

// listen registers sigs for c on a goroutine of its own and returns a
// func that waits until it is done. Each registration is a round trip to
// the Go runtime's signal thread (about 50 µs here: the 11 signals that
// abort a run took 0.54 ms), and the run's next steps go on meanwhile:
// prepare, which takes nothing, beside the signals that abort (one that
// comes before its registration ends padrun by its default action, as it
// does before Run, with nothing taken); the watches' start beside the late
// ones (queued until the child runs, as before). Call
// supervise.KeepIgnored first.
func listen(c chan<- os.Signal, sigs []os.Signal) (wait func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		notify(c, sigs)
	}()
	return func() { <-done }
}

// abortContext returns a context that a signal arriving on sigs cancels,
// with an *AbortError as its cause. handOver stops the watch and returns
// that cause, or nil: the signals that come after it stay on sigs, for the
// child's supervisor. It may be called again.
func abortContext(sigs <-chan os.Signal) (ctx context.Context, handOver func() error) {
	ctx, cancel := context.WithCancelCause(context.Background())
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		select {
		case sig := <-sigs:
			cancel(&AbortError{sig.(syscall.Signal)})
		case <-quit:
		}
	}()
	stop := sync.OnceFunc(func() {
		close(quit)
		<-done
	})
	return ctx, func() error {
		stop()
		return context.Cause(ctx)
	}
}

// errWaitOver is the cause that ends a wait when --wait runs out.
var errWaitOver = errors.New("wrapper: --wait ran out")

// pollEvery is how often a waiter retries a holder it cannot block on: one
// of another machine, or of another user.
const pollEvery = 200 * time.Millisecond

// acquire takes every file in sorted order, waiting up to --wait while one
// is held. A waiter holds nothing while it waits. It ends early, with the
// cause, when ctx does.
func (s *session) acquire(ctx context.Context, files []string) error {
	outer := ctx // etcd is asked within its own bounds, even once --wait ran out
	ctx, cancel := context.WithDeadlineCause(ctx, time.Now().Add(s.o.Wait), errWaitOver)
	defer cancel()
	blockOn := ""
	said := false
	for {
		err := s.acquireAll(ctx, files, blockOn)
		if err == nil {
			err = s.takeEtcd(outer)
		}
		s.markOuter(err)
		var held *marker.HeldError
		if !errors.As(err, &held) {
			return err
		}
		if !held.Kind.Waitable() {
			return err
		}
		if cause := context.Cause(ctx); cause != nil {
			if cause != errWaitOver {
				return cause
			}
			if s.o.Wait > 0 {
				return &WaitedError{HeldError: held, Waited: s.o.Wait}
			}
			return err
		}
		if !said && s.o.OnWait != nil {
			s.o.OnWait(held)
		}
		if !said && s.queued != nil {
			s.queued(held.File)
		}
		said = true
		blockOn = ""
		if f := etcdHeld(err); f != nil {
			if err := s.etcd.c.WaitGone(ctx, f); err != nil && err != errWaitOver {
				return err // watch the key: no polling
			}
			continue
		}
		if held.Kind == marker.HeldBusy {
			blockOn = held.File // block on its lock: no polling
			continue
		}
		if err := sleep(ctx, pollEvery); err != nil && err != errWaitOver {
			return err
		}
	}
}

// markOuter marks err, when it is a refusal whose holder is the run's own
// outer session (its PAD_SESSION_PID): that holder outlives this run, so
// waiting for it cannot end the refusal. Every refusal of a take goes through it, whether
// the file was known before the start or met only later (a harness that
// continues a file that did not exist yet when the run began).
func (s *session) markOuter(err error) {
	var held *marker.HeldError
	if errors.As(err, &held) && s.parent > 0 && held.Holder != nil && held.Holder.Pid == s.parent {
		held.Kind = marker.HeldOuter
	}
}

// acquireAll takes every file, blockOn first and waiting for it, the others
// without waiting. On failure it releases what it took.
func (s *session) acquireAll(ctx context.Context, files []string, blockOn string) error {
	order := files
	if blockOn != "" {
		order = append([]string{blockOn}, slices.DeleteFunc(slices.Clone(files), func(f string) bool { return f == blockOn })...)
	}
	look := s.ahead // one pass over the processes, for every file
	if look == nil {
		look = &outsideLook{}
	}
	s.ahead = nil // a later attempt, after a wait, looks again
	for _, f := range order {
		m := s.proto
		m.Nonce = ident.NewUUID()
		var l *marker.Hold
		var err error
		if f == blockOn {
			l, err = marker.Acquire(ctx, f, m, s.self)
			if err == errWaitOver {
				l, err = marker.TryAcquire(f, m, s.self) // one last try, for the refusal
			}
		} else {
			l, err = marker.TryAcquire(f, m, s.self)
		}
		if err != nil {
			s.release()
			return err
		}
		s.warnFS(l)
		s.add(l) // no child yet: its marker gets it later
		if err := s.inUse.held(f); err != nil {
			s.release()
			return err
		}
		if err := s.outsideHeld(look, f); err != nil {
			s.release()
			return err
		}
	}
	// In the order of files, whichever was waited for: the record lists them so.
	s.sort()
	return nil
}

// sleep waits for d, or until ctx ends; then it returns ctx's cause.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
