package wrapper

import (
	"fmt"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/padrun/padrun/supervise"
)

// childStop is how the run stops its child and why it was stopped: padrun
// exits with the first reason, but that a lost hold in etcd (a
// *FencedError) stands over any other. Its lock guards it all; it is taken
// under the session's mu, never the reverse, and kill and term are called
// under it (they only signal).
type childStop struct {
	stopMu  sync.Mutex
	kill    func() // ends the child at once; nil until it started
	stopped error  // why the run stopped the child, or nil
	// term stops the child as the fence does (TERM, then KILL after the
	// grace), from any goroutine; childEnded: it was reaped (lost.go).
	term       func()
	childEnded bool
}

// startedChild names how to stop the child, once started, and says why it
// was to be stopped before it was known, or nil.
func (c *childStop) startedChild(kill, term func()) error {
	c.stopMu.Lock()
	defer c.stopMu.Unlock()
	c.kill, c.term = kill, term
	return c.stopped
}

// stopChild ends the child at once, keeping why unless a reason was kept
// already.
func (c *childStop) stopChild(why error) {
	c.stopMu.Lock()
	defer c.stopMu.Unlock()
	if c.stopped == nil {
		c.stopped = why
	}
	if c.kill != nil {
		c.kill()
	}
}

// stoppedWhy is why the run stopped the child, or nil.
func (c *childStop) stoppedWhy() error {
	c.stopMu.Lock()
	defer c.stopMu.Unlock()
	return c.stopped
}

// keepWhy keeps why, unless a reason was kept already, and stops nothing:
// the child has ended.
func (c *childStop) keepWhy(why error) {
	c.stopMu.Lock()
	defer c.stopMu.Unlock()
	if c.stopped == nil {
		c.stopped = why
	}
}

// fencedChild keeps e, the hold in etcd lost, over any other reason but an
// earlier *FencedError, unless replace (the fence's own words); kill ends
// the child at once too.
func (c *childStop) fencedChild(e *FencedError, replace, kill bool) {
	c.stopMu.Lock()
	defer c.stopMu.Unlock()
	if _, ok := c.stopped.(*FencedError); !ok || replace {
		c.stopped = e
	}
	if kill && c.kill != nil {
		c.kill()
	}
}

// loseChild keeps e, a lost hold, unless a reason was kept already, and
// reports whether it did: then, once say has told people, it stops the
// child (TERM, then KILL after the grace) while it runs, and e says so.
// say is told whether the child had ended already.
func (c *childStop) loseChild(e *LostHoldError, say func(ended bool)) bool {
	c.stopMu.Lock()
	defer c.stopMu.Unlock()
	if c.stopped != nil {
		return false // stopped already: the first reason stands
	}
	c.stopped = e
	e.Ended = "the child had ended already"
	if c.childEnded {
		say(true)
		return true
	}
	e.Ended = stopping
	say(false)
	if c.term != nil {
		c.term()
	} // else the supervisor stops it as it starts
	return true
}

// reapedChild says the child was reaped with st: nothing stops it any
// more, and a lost hold's error says how the stopped child ended (grace:
// --grace). It returns why the run stopped it, or nil.
func (c *childStop) reapedChild(st supervise.Status, grace time.Duration) error {
	c.stopMu.Lock()
	defer c.stopMu.Unlock()
	c.term, c.childEnded = nil, true
	e, ok := c.stopped.(*LostHoldError)
	if !ok || e.Ended != stopping {
		return c.stopped
	}
	switch st.Signal {
	case 0:
		e.Ended = fmt.Sprintf("padrun stopped the child: on TERM it exited with status %d", st.Code)
	case syscall.SIGTERM:
		e.Ended = "padrun stopped the child: it died by TERM"
	case syscall.SIGKILL:
		e.Ended = fmt.Sprintf("padrun stopped the child: TERM, then KILL after the grace (%s)", grace)
	default:
		e.Ended = "padrun stopped the child: it died by signal " + strconv.Itoa(int(st.Signal)) + " (" + st.Signal.String() + ")"
	}
	return c.stopped
}

// whyStopped is why the run stopped the child, or nil.
func (c *childStop) whyStopped() error {
	c.stopMu.Lock()
	defer c.stopMu.Unlock()
	return c.stopped
}
