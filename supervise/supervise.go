// Package supervise runs the child: it finds and starts the command, forwards
// signals to it, enforces the grace period and the timeout, and reports how
// it ended.
package supervise

import (
	"io"
	"strconv"
	"syscall"
	"time"

	"github.com/padrun/padrun/supervise/cgroup"
)

// ExecError says the command could not be run.
type ExecError struct {
	Name          string
	NotExecutable bool // found but not executable (126); else not found (127)
	Err           error
}

func (e *ExecError) Error() string {
	if e.NotExecutable {
		return "supervise: " + e.Name + ": cannot execute: " + e.Err.Error()
	}
	return "supervise: " + e.Name + ": command not found"
}

func (e *ExecError) Unwrap() error { return e.Err }

// Spec says what to run and how to supervise it.
type Spec struct {
	Path string   // the executable, from LookPath
	Args []string // argv, Args[0] included
	Env  []string
	// Pty runs the child on a new pseudo-terminal.
	Pty bool
	// Transcript, when set, receives the session's output as the user
	// sees it (--record).
	Transcript io.Writer
	// Cgroup, when set, is the cgroup the child is born in.
	Cgroup *cgroup.Session
	// Inherit lists descriptors the child inherits at their own numbers,
	// as flock(1) hands its lock to the command: the session's locks.
	Inherit []uintptr
}

// Status is how the child ended.
type Status struct {
	Code     int            // exit code, when it exited
	Signal   syscall.Signal // the signal that killed it, or 0
	TimedOut bool           // --timeout ran out
	// Err, when set, says the child is gone but how it ended cannot be
	// told (a *LostError): Code and Signal mean nothing then.
	Err error
}

// LostError says the child ended but its exit status is lost: wait4 failed
// (ECHILD when something else reaped it). padrun must not pass that on as
// an exit 0.
type LostError struct {
	Pid int
	Err error
}

func (e *LostError) Error() string {
	return "supervise: the exit status of child pid " + strconv.Itoa(e.Pid) + " is lost: " + e.Err.Error()
}

func (e *LostError) Unwrap() error { return e.Err }

// Job is work that Supervise runs on its own goroutine between its waits,
// while the child runs, and EndRest while it ends what the child left: a
// periodic write needs no goroutine or timer of its own.
type Job struct {
	After time.Duration // the first run, this long after Supervise begins; 0: at once
	Every time.Duration // then again every Every; 0: once
	// Run does the job's work, without waiting for anything: where it
	// would have to (another process holds a lock), it returns how soon to
	// try again, and the supervisor goes on forwarding signals meanwhile.
	// It returns 0 when the work is done.
	Run func(now time.Time) (retry time.Duration)
}

// schedule runs jobs when they are due, through one timer.
type schedule struct {
	jobs  []Job
	next  []time.Time // zero once a job is done
	timer *time.Timer
	armed bool
}

func newSchedule(jobs []Job, now time.Time) *schedule {
	s := &schedule{jobs: jobs, next: make([]time.Time, len(jobs))}
	for i, j := range jobs {
		s.next[i] = now.Add(j.After)
	}
	return s
}

// runDue runs the jobs due by now, in their order, and arms the timer for
// the next one.
func (s *schedule) runDue(now time.Time) {
	if s == nil {
		return
	}
	for i, j := range s.jobs {
		if s.next[i].IsZero() || s.next[i].After(now) {
			continue
		}
		switch retry := j.Run(now); {
		case retry > 0:
			s.next[i] = now.Add(retry)
		case j.Every <= 0:
			s.next[i] = time.Time{}
		case s.next[i].Add(j.Every).After(now):
			s.next[i] = s.next[i].Add(j.Every)
		default:
			s.next[i] = now.Add(j.Every) // late: no burst of missed runs
		}
	}
	s.arm(now)
}

// arm sets the timer for the earliest job still to run.
func (s *schedule) arm(now time.Time) {
	var first time.Time
	for _, t := range s.next {
		if !t.IsZero() && (first.IsZero() || t.Before(first)) {
			first = t
		}
	}
	if first.IsZero() {
		s.stop()
		return
	}
	if s.timer == nil {
		s.timer = time.NewTimer(first.Sub(now))
	} else {
		s.timer.Reset(first.Sub(now))
	}
	s.armed = true
}

// C is the channel the next run is due on; nil when none is.
func (s *schedule) C() <-chan time.Time {
	if s == nil || !s.armed {
		return nil
	}
	return s.timer.C
}

// stop ends the schedule: no job runs any more.
func (s *schedule) stop() {
	if s == nil {
		return
	}
	if s.timer != nil {
		s.timer.Stop()
	}
	s.armed = false
	clear(s.next)
}
