package wrapper

import (
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/padrun/padrun/supervise"
)

// TestChildStop_FirstReasonStands: padrun exits with the first reason the
// child was stopped for, the stop kills a started child each time, and a
// reason kept before the child started is its first word.
func TestChildStop_FirstReasonStands(t *testing.T) {
	var c childStop
	first, second := errors.New("first"), errors.New("second")
	c.stopChild(first) // before the child started: nothing to kill
	kills := 0
	if got := c.startedChild(func() { kills++ }, func() { t.Fatal("a refusal TERMed the child") }); got != first {
		t.Fatalf("the child started: %v, want the reason kept before", got)
	}
	c.stopChild(second)
	c.keepWhy(second)
	if got := c.whyStopped(); got != first || kills != 1 {
		t.Fatalf("why %v, killed %d; want the first reason, killed once", got, kills)
	}
}

// TestChildStop_FencedStandsOverAll: a lost hold in etcd stands over any
// other reason, but an earlier one of its own; the fence's words replace
// that; a fence that kills kills.
func TestChildStop_FencedStandsOverAll(t *testing.T) {
	var c childStop
	kills := 0
	c.startedChild(func() { kills++ }, nil)
	c.stopChild(errors.New("refused"))
	early, late, words := &FencedError{Why: "early"}, &FencedError{Why: "late"}, &FencedError{Why: "the fence's"}
	c.fencedChild(early, false, false)
	c.fencedChild(late, false, true)
	if got := c.whyStopped(); got != early || kills != 2 {
		t.Fatalf("why %v, killed %d; want the first fence, killed by the refusal and the second", got, kills)
	}
	c.fencedChild(words, true, false)
	if got := c.whyStopped(); got != words || kills != 2 {
		t.Fatalf("why %v, killed %d; want the fence's words", got, kills)
	}
}

// TestChildStop_LostHold: a lost hold TERMs a running child and says, once
// it is reaped, how it ended; a hold lost once it ended says so; a hold
// lost after another reason changes nothing.
func TestChildStop_LostHold(t *testing.T) {
	grace := 3 * time.Second
	for _, tc := range []struct {
		st   supervise.Status
		want string
	}{
		{supervise.Status{Code: 143}, "padrun stopped the child: on TERM it exited with status 143"},
		{supervise.Status{Signal: syscall.SIGTERM}, "padrun stopped the child: it died by TERM"},
		{supervise.Status{Signal: syscall.SIGKILL}, "padrun stopped the child: TERM, then KILL after the grace (3s)"},
		{supervise.Status{Signal: syscall.SIGSEGV}, "padrun stopped the child: it died by signal 11 (segmentation fault)"},
	} {
		var c childStop
		terms := 0
		c.startedChild(func() { t.Fatal("a lost hold killed the child at once") }, func() { terms++ })
		e := &LostHoldError{File: "/s.jsonl"}
		var saidEnded []bool
		if !c.loseChild(e, func(ended bool) { saidEnded = append(saidEnded, ended) }) || terms != 1 || len(saidEnded) != 1 || saidEnded[0] {
			t.Fatalf("a lost hold of a running child: TERMed %d, said %v", terms, saidEnded)
		}
		if e.Ended != stopping {
			t.Fatalf("while the child stops: %q", e.Ended)
		}
		if got := c.reapedChild(tc.st, grace); got != e || e.Ended != tc.want {
			t.Errorf("reaped with %+v: %v, %q; want %q", tc.st, got, e.Ended, tc.want)
		}
		if c.loseChild(&LostHoldError{}, func(bool) { t.Fatal("a second lost hold was said") }) {
			t.Fatal("a second lost hold replaced the first")
		}
	}
	var c childStop
	c.reapedChild(supervise.Status{}, grace)
	e := &LostHoldError{File: "/s.jsonl"}
	ended := false
	if !c.loseChild(e, func(b bool) { ended = b }) || !ended || e.Ended != "the child had ended already" {
		t.Fatalf("a hold lost once the child ended: said ended %v, %q", ended, e.Ended)
	}
	if got := c.reapedChild(supervise.Status{Signal: syscall.SIGKILL}, grace); e.Ended != "the child had ended already" || got != e {
		t.Fatalf("reaped again: %v, %q", got, e.Ended)
	}
}
