package supervise

import (
	"errors"
	"os"
	"os/exec"
	"time"

	"golang.org/x/sys/windows"
)

// AbortSignals lists the signals that abort a run before its child starts.
var AbortSignals = []os.Signal{os.Interrupt}

// KeepIgnored does nothing: Windows has no inherited signal dispositions.
func KeepIgnored() {}

// LateSignals lists the signals that only matter once a child runs.
var LateSignals []os.Signal

// LookPath finds name in path as os/exec does.
func LookPath(name, _ string) (string, error) {
	p, err := exec.LookPath(name)
	if err != nil {
		return "", &ExecError{Name: name, Err: err}
	}
	return p, nil
}

// LookPathNotSelf is LookPath: padrun makes no folder of harness entries
// on Windows.
func LookPathNotSelf(name, path string) (string, error) { return LookPath(name, path) }

// IsTerminal reports whether fd is a console.
func IsTerminal(fd uintptr) bool {
	var mode uint32
	return windows.GetConsoleMode(windows.Handle(fd), &mode) == nil
}

// Child is a started child process.
type Child struct {
	Pid int
	// Cgroup, Pgid and Sid are Linux's and Unix's: always empty here.
	Cgroup    string
	Pgid, Sid int
	p         *os.Process
}

// Start starts the child. Windows has no pseudo-terminals here.
func Start(s Spec) (*Child, error) {
	if s.Pty || s.Transcript != nil {
		return nil, errors.New("supervise: --pty and --record are not supported on Windows")
	}
	p, err := os.StartProcess(s.Path, s.Args, &os.ProcAttr{Env: s.Env, Files: []*os.File{os.Stdin, os.Stdout, os.Stderr}})
	if err != nil {
		return nil, &ExecError{Name: s.Args[0], NotExecutable: true, Err: err}
	}
	return &Child{Pid: p.Pid, p: p}, nil
}

// Kill ends the child at once.
func (c *Child) Kill() { c.p.Kill() } // Best effort.

// Stop ends the child: Windows has no TERM to send.
func (c *Child) Stop() { c.p.Kill() } // Best effort.

// Terminate ends the child: Windows has no TERM to send.
func (c *Child) Terminate() { c.p.Kill() } // Best effort.

// EndRest: Windows gives padrun no view of what the child left.
func (c *Child) EndRest(time.Duration, func([]int)) []int { return nil }

// Close releases nothing on Windows.
func (c *Child) Close() {}

// Supervise waits for the child, ending it after the timeout, and runs the
// jobs while it runs.
func (c *Child) Supervise(sigs <-chan os.Signal, grace, timeout time.Duration, jobs ...Job) Status {
	sched := newSchedule(jobs, time.Now())
	defer sched.stop()
	sched.runDue(time.Now())
	done := make(chan *os.ProcessState, 1)
	go func() {
		ps, _ := c.p.Wait()
		done <- ps
	}()
	var st Status
	var deadline <-chan time.Time
	if timeout > 0 {
		deadline = time.After(timeout)
	}
	for {
		select {
		case ps := <-done:
			if ps != nil {
				st.Code = ps.ExitCode()
			}
			return st
		case <-sigs:
			c.p.Kill() // Best effort: Windows has no signals to forward.
		case <-deadline:
			st.TimedOut = true
			c.p.Kill() // Best effort.
		case now := <-sched.C():
			sched.runDue(now)
		}
	}
}
