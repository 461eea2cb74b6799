//go:build unix

package supervise

import (
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// The jobs run on Supervise's own goroutine, which starts none: a job that
// runs once at once runs once, even for a child that is gone at once; a
// periodic one runs on until the child ends, here by a TERM it sends.
func TestSupervise_RunsJobsOnItsOwnGoroutine(t *testing.T) {
	warm := make(chan os.Signal, 1)
	signal.Notify(warm, syscall.SIGUSR2) // os/signal's own goroutine, started once per process
	signal.Stop(warm)
	s, readyFile := helper(t, "trap-term")
	c, err := Start(s)
	if err != nil {
		t.Fatal(err)
	}
	waitReady(t, readyFile)
	sigs := make(chan os.Signal, 1)
	before := runtime.NumGoroutine()
	once, beats, during, tries := 0, 0, 0, 0
	sent := false
	st := c.Supervise(sigs, time.Minute, time.Minute, // the timeout only ends a broken run
		Job{Run: func(time.Time) time.Duration { once++; return 0 }},
		Job{Run: func(time.Time) time.Duration { // busy twice, then done
			if tries++; tries < 3 {
				return time.Millisecond
			}
			return 0
		}},
		Job{After: time.Millisecond, Every: time.Millisecond, Run: func(time.Time) time.Duration {
			beats++
			during = max(during, runtime.NumGoroutine())
			if beats >= 3 && tries == 3 && !sent { // the retries done, however slow the machine
				sent = true
				sigs <- syscall.SIGTERM
			}
			return 0
		}})
	if st.Code != 0 || st.Signal != 0 || st.TimedOut {
		t.Fatalf("status %+v, want the helper's exit 0 on TERM", st)
	}
	if once != 1 || tries != 3 || beats < 3 {
		t.Fatalf("once ran %d times, the retrying job %d, the periodic job %d; want 1, 3 and at least 3", once, tries, beats)
	}
	if during > before {
		t.Fatalf("%d goroutines while supervising, %d before: Supervise started some", during, before)
	}
	if c.EndRest(grace, nil); c.jobs.C() != nil {
		t.Fatal("the jobs still run after EndRest")
	}
	s, _ = helper(t, "exit7")
	if c, err = Start(s); err != nil {
		t.Fatal(err)
	}
	once = 0
	if st := c.Supervise(nil, grace, 0, Job{Run: func(time.Time) time.Duration { once++; return 0 }}); st.Code != 7 || once != 1 {
		t.Fatalf("status %+v, job ran %d times; want exit 7 and once", st, once)
	}
}

// While EndRest waits for what the child left to end, the jobs run on (the
// heartbeat must not fall silent), and stop when it returns.
func TestEndRest_RunsTheJobsWhileItWaits(t *testing.T) {
	s, _ := helper(t, "leave-ignoring-term")
	gc := t.TempDir() + "/grandchild"
	s.Env = append(s.Env, "GRANDCHILD="+gc)
	c, err := Start(s)
	if err != nil {
		t.Fatal(err)
	}
	beats := 0
	var ended bool
	if st := c.Supervise(nil, grace, 0, Job{After: time.Hour, Every: time.Millisecond, Run: func(time.Time) time.Duration {
		if ended {
			beats++
		}
		return 0
	}}); st.Code != 0 {
		t.Fatalf("helper ended with %+v", st)
	}
	ended = true
	c.jobs.next[0] = time.Now() // due while EndRest waits out the grace
	if left := c.EndRest(grace, nil); len(left) > 0 {
		t.Fatalf("survivors %v", left)
	}
	if beats == 0 {
		t.Fatal("no job ran while EndRest waited")
	}
	if c.jobs.C() != nil {
		t.Fatal("the jobs still run after EndRest")
	}
}
