package wrapper

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/padrun/padrun/supervise/cgroup"
)

// greetLog is a log that tells, line by line, what was said.
type greetLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
	ch  chan string
}

func newGreetLog() *greetLog { return &greetLog{ch: make(chan string, 64)} }

func (l *greetLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	l.ch <- string(p)
	return len(p), nil
}

func (l *greetLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// waitLine waits for a line that has want in it.
func (l *greetLog) waitLine(t *testing.T, want string) string {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case line := <-l.ch:
			if strings.Contains(line, want) {
				return line
			}
		case <-timeout:
			t.Fatalf("no line with %q; said: %s", want, l.String())
		}
	}
}

// greetRefusal is what a strict greeting's refuse was called with.
type greetRefusal struct {
	err     *UsageError
	running bool
}

// testGreeting is the greeting of pi's companion, saying into a log of
// its own; under strict, its refusals come on the channel.
func testGreeting(wait time.Duration, interactive, strict bool) (*greeting, *greetLog, chan greetRefusal) {
	log := newGreetLog()
	refused := make(chan greetRefusal, 4)
	g := &greeting{harness: "pi", loadedBy: "--extension", wait: wait, interactive: interactive, strict: strict,
		log: zerolog.New(log), refuse: func(err *UsageError, running bool) { refused <- greetRefusal{err, running} }}
	return g, log, refused
}

// TestGreeting_ClockRunsOut: a companion that never greets a print run is
// said to have not greeted once its clock runs out from the child's
// start: a warning, and under --strict a refusal that stops the running
// child.
func TestGreeting_ClockRunsOut(t *testing.T) {
	g, log, _ := testGreeting(time.Millisecond, false, false)
	g.started()
	line := log.waitLine(t, "did not greet padrun within 1ms")
	if !strings.Contains(line, "pi ignored --extension") || !strings.Contains(line, `"level":"warn"`) {
		t.Fatalf("warning %q", line)
	}
	g.hello()
	log.waitLine(t, "greeted padrun late")
	if g.muting() {
		t.Fatal("a late greeting mutes the watch: its files go unclaimed")
	}

	g, _, refused := testGreeting(time.Millisecond, false, true)
	g.started()
	r := <-refused
	if !r.running || !strings.Contains(r.err.Error(), "--strict is set: pi was stopped") || r.err.Hint() == "" {
		t.Fatalf("strict refusal %+v (%v)", r, r.err)
	}
	g.childEnded()
	select {
	case r := <-refused:
		t.Fatalf("decided twice: %v", r.err)
	default:
	}
}

// TestGreeting_HelloStopsClockAndWatch: a greeting stops the clock, mutes
// the fallback watch and stops it, whether it was named before or after.
func TestGreeting_HelloStopsClockAndWatch(t *testing.T) {
	for _, before := range []bool{true, false} {
		g, log, refused := testGreeting(time.Hour, false, true)
		stopped := make(chan struct{})
		stop := func() { close(stopped) }
		if before {
			g.setWatch(stop)
		}
		g.started()
		if g.muting() {
			t.Fatal("muted before the greeting")
		}
		g.hello()
		g.hello() // again: nothing more
		if !before {
			g.setWatch(stop)
		}
		<-stopped
		if !g.muting() {
			t.Fatal("the watch is not muted once the companion greeted")
		}
		if g.timer.Stop() {
			t.Fatal("the clock still runs after the greeting")
		}
		g.claimed = true
		g.childEnded()
		select {
		case r := <-refused:
			t.Fatalf("a companion that greeted was refused: %v", r.err)
		default:
		}
		if !strings.Contains(log.String(), "the companion greeted padrun") {
			t.Fatalf("log %q", log.String())
		}
	}
}

// TestGreeting_InteractiveClockStartsAtFirstClaim: in interactive mode the
// child's start starts no clock (a person may be busy with a picker); the
// first file the watch claims does.
func TestGreeting_InteractiveClockStartsAtFirstClaim(t *testing.T) {
	g, _, refused := testGreeting(time.Millisecond, true, true)
	g.started()
	if g.timer != nil {
		t.Fatal("an interactive run's clock started with the child")
	}
	g.watchClaimed()
	if r := <-refused; !r.running {
		t.Fatalf("refusal of a running child said it ended: %v", r.err)
	}
}

// TestGreeting_ChildEnded: a child that ended without its companion's
// greeting is judged then, once the watch claimed a file for it (its
// refusal says the watch claimed them); without a claimed file it is not.
func TestGreeting_ChildEnded(t *testing.T) {
	g, _, refused := testGreeting(time.Hour, true, true)
	g.childEnded()
	select {
	case r := <-refused:
		t.Fatalf("a run that claimed nothing was refused: %v", r.err)
	default:
	}

	g, _, refused = testGreeting(time.Hour, true, true)
	g.watchClaimed()
	g.childEnded()
	r := <-refused
	if r.running || !strings.Contains(r.err.Error(), "never greeted padrun") || !strings.Contains(r.err.Error(), "claimed by the folder watch") {
		t.Fatalf("refusal at the child's end: running %v, %v", r.running, r.err)
	}
	if g.timer.Stop() {
		t.Fatal("the clock runs on after the child's end")
	}
}

// TestGreeting_DeferredWarning: on an interactive terminal the warning
// waits for the harness's screen to go, and the database harness's says
// what is unguarded for it.
func TestGreeting_DeferredWarning(t *testing.T) {
	g, log, _ := testGreeting(time.Hour, true, false)
	g.deferWarn, g.database = true, true
	g.watchClaimed()
	g.childEnded()
	if s := log.String(); s != "" {
		t.Fatalf("said over the harness's screen: %s", s)
	}
	g.remind()()
	if line := log.waitLine(t, "never greeted padrun"); !strings.Contains(line, "the sessions pi picks or makes itself") {
		t.Fatalf("reminder %q", line)
	}
}

// TestGreeting_None: without a companion every step is nothing.
func TestGreeting_None(t *testing.T) {
	var g *greeting
	g.setWatch(func() { t.Fatal("the watch of a run without a companion was stopped") })
	g.started()
	g.hello()
	g.watchClaimed()
	g.childEnded()
	g.remind()()
	if g.muting() {
		t.Fatal("muted without a companion")
	}
}

// TestGreeting_StallsDoNotCount: the time the harness's tree waited for the
// machine (its cgroup's CPU and I/O pressure) is not on the clock, up to
// cgroup.MaxStretch times it: a tree stalled all along is told of later, and still
// told; one that never stalled at the clock's end.
func TestGreeting_StallsDoNotCount(t *testing.T) {
	g, log, _ := testGreeting(10*time.Millisecond, false, false)
	g.log = g.log.Level(zerolog.DebugLevel)
	t0 := time.Now()
	g.stalled = func() time.Duration { return time.Since(t0) } // always waiting
	g.started()
	log.waitLine(t, "the companion's clock goes on: the harness waited for the machine")
	log.waitLine(t, "did not greet padrun within 10ms")
	if wall := time.Since(t0); wall < cgroup.MaxStretch*g.wait {
		t.Fatalf("told after %s, before the clock's stretch of %s", wall, cgroup.MaxStretch*g.wait)
	}

	g, log, _ = testGreeting(10*time.Millisecond, false, false)
	g.log = g.log.Level(zerolog.DebugLevel)
	g.stalled = func() time.Duration { return 0 }
	g.started()
	log.waitLine(t, "did not greet padrun within 10ms")
	if strings.Contains(log.String(), "clock goes on") {
		t.Fatalf("a tree that never waited had its clock stretched: %s", log.String())
	}
}

// TestGreeting_ServerHasNoClock: a server's companion loads with the first
// session it serves (opencode serve, measured: it greets at the first
// request, and an idle server was told it had not greeted within 20s), so
// no clock runs; one that never greeted by the server's end is said to.
func TestGreeting_ServerHasNoClock(t *testing.T) {
	g, log, _ := testGreeting(time.Millisecond, false, false)
	g.served = true
	g.started()
	g.mu.Lock()
	timer := g.timer
	g.mu.Unlock()
	if timer != nil {
		t.Fatal("a server's clock started with it")
	}
	g.childEnded()
	log.waitLine(t, "never greeted padrun")

	g, log, _ = testGreeting(time.Millisecond, false, false)
	g.served = true
	g.started()
	g.hello()
	g.childEnded()
	if strings.Contains(log.String(), "greet padrun") || strings.Contains(log.String(), "never greeted") {
		t.Fatalf("a server whose companion greeted was warned: %s", log.String())
	}
}
