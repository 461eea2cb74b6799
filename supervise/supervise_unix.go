//go:build unix

package supervise

import (
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/padrun/padrun/supervise/cgroup"
)

// fatal lists the signals whose default action ends a process with a core
// dump and that kill(2) can send; Go would answer them with a goroutine dump
// and exit 2. padrun handles them like TERM.
var fatal = []os.Signal{unix.SIGABRT, unix.SIGSEGV, unix.SIGBUS, unix.SIGFPE, unix.SIGILL, unix.SIGSYS, unix.SIGTRAP}

// AbortSignals lists the signals that abort a run before its child
// starts, in the order they are registered.
var AbortSignals = append([]os.Signal{unix.SIGTERM, unix.SIGHUP, unix.SIGINT, unix.SIGQUIT}, fatal...)

// endsGrace reports whether sig, forwarded to the child, starts the grace period
// after which every process of the session is killed: TERM's way.
func endsGrace(sig syscall.Signal) bool {
	if sig == unix.SIGTERM || sig == unix.SIGHUP {
		return true
	}
	for _, f := range fatal {
		if f == sig {
			return true
		}
	}
	return false
}

// KeepIgnored keeps QUIT ignored when INT was ignored at start. The Go
// runtime keeps an inherited SIG_IGN only for HUP and INT and installs its
// own QUIT handler before padrun runs, so QUIT's own start-up disposition is
// lost; shells ignore INT and QUIT together (the background jobs of a
// non-interactive shell), so INT tells. Call it before registering signals.
func KeepIgnored() {
	if signal.Ignored(unix.SIGINT) {
		signal.Ignore(unix.SIGQUIT) // the child inherits SIG_IGN through exec
	}
}

// LateSignals lists the signals that only matter once a child runs: registered
// once nothing can abort the run any more, just before Start (which locks
// the thread, after which each registration costs more), they are queued
// and forwarded once the child runs.
var LateSignals = []os.Signal{unix.SIGUSR1, unix.SIGUSR2, unix.SIGWINCH, unix.SIGCONT}

// LookPath finds name like a shell does: a name with a slash is used as it
// is; otherwise the first executable regular file in PATH. A match that is
// not executable makes an *ExecError with NotExecutable set.
func LookPath(name, path string) (string, error) { return lookPath(name, path, false) }

// LookPathNotSelf is LookPath for a harness's command: it passes over the
// entries that are padrun's own executable (the folder of harness entries
// padrun puts first in a session's PATH, or an alias made by ln -s padrun
// pi), so that padrun started under a harness's name runs the real harness
// further down PATH and never itself.
func LookPathNotSelf(name, path string) (string, error) { return lookPath(name, path, true) }

// self is padrun's own executable's device and inode, or ok false.
var self = sync.OnceValues(func() (unix.Stat_t, bool) {
	var st unix.Stat_t
	exe, err := os.Executable()
	return st, err == nil && unix.Stat(exe, &st) == nil
})

func lookPath(name, path string, notSelf bool) (string, error) {
	if name == "" {
		return "", &ExecError{Name: name, Err: unix.ENOENT}
	}
	if strings.Contains(name, "/") {
		return name, nil
	}
	var denied error
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		var st unix.Stat_t
		if unix.Stat(p, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
			continue
		}
		if own, ok := self(); notSelf && ok && st.Dev == own.Dev && st.Ino == own.Ino {
			continue
		}
		if err := unix.Access(p, unix.X_OK); err != nil {
			denied = err
			continue
		}
		return p, nil
	}
	if denied != nil {
		return "", &ExecError{Name: name, NotExecutable: true, Err: denied}
	}
	return "", &ExecError{Name: name, Err: unix.ENOENT}
}

// Child is a started child process.
type Child struct {
	Pid int
	// Cgroup is the session's cgroup folder, when the child was born in one.
	Cgroup string
	// Pgid and Sid are the process group and session the child leads, or 0.
	Pgid, Sid int
	ownGroup  bool // the child leads its own process group
	tty       int  // our controlling terminal's fd, or -1
	io        *relay
	cgroup    *cgroup.Session      // the cgroup it was born in, or nil
	stalled   func() time.Duration // how long the session waited for the machine (cgroup.Clock)
	jobs      *schedule            // Supervise's jobs, which EndRest runs on
	stop      chan struct{}        // Stop's request, for Supervise
}

// Start starts the child. The child shares padrun's process group when
// padrun has a controlling terminal, so that the terminal's Ctrl-C, Ctrl-Z
// and fg reach both as one job; otherwise it leads its own group, which
// padrun can kill whole. It gets SIGKILL when the thread that forked it
// exits (Linux's parent-death signal): Start locks the calling goroutine to
// its thread before the fork, for good, so that thread lives as long as
// that goroutine. Call it from padrun's main goroutine, whose end is
// padrun's; a goroutine that ended before the child would kill it.
// Locking only here, not from the start, keeps the rest of the start-up
// free of the hand-offs a locked goroutine costs at each wait.
//
// With Pty the child leads a new session on a new pseudo-terminal instead;
// with Transcript and no Pty its stdout and stderr become pipes that padrun
// copies to its own and to the transcript. Close restores what Start changed.
func Start(s Spec) (*Child, error) {
	tty := controllingTTY()
	attr := &syscall.ProcAttr{
		Env:   s.Env,
		Files: []uintptr{0, 1, 2},
		Sys:   sysProcAttr(tty < 0),
	}
	var r *relay
	var err error
	switch {
	case s.Pty:
		r, err = newPtyRelay(s.Transcript)
		attr.Sys.Setsid, attr.Sys.Setctty, attr.Sys.Setpgid, attr.Sys.Ctty = true, true, false, 0
		tty = -1
	case s.Transcript != nil:
		r, err = newPipeRelay(s.Transcript)
	}
	if err != nil {
		return nil, err
	}
	if r != nil {
		attr.Files = r.childFiles
	}
	subreaper()
	// Signals are registered before the thread is locked: each costs a
	// round trip to the runtime's signal thread, dearer from a locked one.
	keepSIGCHLD()
	runtime.LockOSThread() // never undone: see above
	// Only this goroutine forks: clearing close-on-exec for the fork alone
	// cannot leak the locks into another program.
	for _, fd := range s.Inherit {
		unix.FcntlInt(fd, unix.F_SETFD, 0) // Best effort: the other engines still hold.
	}
	pid, cg, err := forkExec(s.Path, s.Args, attr, s.Cgroup)
	for _, fd := range s.Inherit {
		unix.FcntlInt(fd, unix.F_SETFD, unix.FD_CLOEXEC) // Best effort.
	}
	if r != nil {
		r.childPid.Store(int64(pid))
		r.started()
	}
	if err != nil {
		if r != nil {
			r.close()
		}
		return nil, execError(s.Args[0], err)
	}
	c := &Child{Pid: pid, ownGroup: tty < 0, tty: tty, io: r, cgroup: cg, stalled: cg.Stalled, stop: make(chan struct{}, 1)}
	if cg != nil {
		c.Cgroup = cg.Path
	}
	switch {
	case s.Pty:
		c.Pgid, c.Sid = pid, pid
	case c.ownGroup:
		c.Pgid = pid
	}
	return c, nil
}

// Close drains the child's output and restores the terminal. Call it on
// every exit path once the child is gone.
func (c *Child) Close() {
	if c.io != nil {
		c.io.close()
	}
}

func execError(name string, err error) error {
	switch err {
	case unix.ENOENT, unix.ENOTDIR:
		return &ExecError{Name: name, Err: err}
	case unix.EACCES, unix.EPERM, unix.ENOEXEC, unix.EISDIR, unix.ETXTBSY:
		return &ExecError{Name: name, NotExecutable: true, Err: err}
	}
	return &ExecError{Name: name, NotExecutable: true, Err: err}
}

// IsTerminal reports whether fd is a terminal, as isatty(3) does.
func IsTerminal(fd uintptr) bool {
	_, err := unix.IoctlGetTermios(int(fd), ioctlGetTermios)
	return err == nil
}

// controllingTTY returns the first of stdin, stdout and stderr that is our
// controlling terminal, or -1.
func controllingTTY() int {
	for fd := 0; fd <= 2; fd++ {
		if _, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP); err == nil {
			return fd
		}
	}
	return -1
}

// atTerminal reports whether padrun is in its terminal's foreground group:
// then the terminal itself delivers Ctrl-C, Ctrl-\ and resizes to the child,
// and forwarding them would deliver them twice.
func (c *Child) atTerminal() bool {
	if c.ownGroup || c.tty < 0 {
		return false
	}
	fg, err := unix.IoctlGetInt(c.tty, unix.TIOCGPGRP)
	return err == nil && fg == unix.Getpgrp()
}

// Supervise forwards the signals arriving on sigs to the child until it
// exits, ends it after the timeout, kills it after the grace period, and
// reaps it. It does all of it on the calling goroutine, with no goroutine
// or thread of its own: SIGCHLD wakes it, it reaps the child itself, and so
// the child's pid is only signalled while it is known unreaped. It reaps
// the session's orphans too (padrun is their subreaper), and runs the jobs
// when they are due; EndRest runs them on while it ends what the child left.
func (c *Child) Supervise(sigs <-chan os.Signal, grace, timeout time.Duration, jobs ...Job) Status {
	keepSIGCHLD()
	chld := make(chan os.Signal, 1)
	signal.Notify(chld, unix.SIGCHLD) // before the first look: no exit is missed
	defer signal.Stop(chld)
	c.jobs = newSchedule(jobs, time.Now())
	var deadline, kill <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	var graceTimer *time.Timer
	startGrace := func() {
		if graceTimer == nil {
			graceTimer = time.NewTimer(grace)
			kill = graceTimer.C
		}
	}
	defer func() {
		if graceTimer != nil {
			graceTimer.Stop()
		}
	}()
	var st Status
	c.jobs.runDue(time.Now())
	for {
		if ws, ended, err := c.reap(); ended {
			switch {
			case err != nil:
				st.Err = err
			case ws.Exited():
				st.Code = ws.ExitStatus()
			case ws.Signaled():
				st.Signal = ws.Signal()
			}
			return st
		}
		select {
		case <-chld:
		case s := <-sigs:
			if c.forward(s.(syscall.Signal)) {
				startGrace()
			}
		case <-deadline:
			st.TimedOut = true
			unix.Kill(c.Pid, unix.SIGTERM) // Best effort.
			unix.Kill(c.Pid, unix.SIGCONT) // Best effort: a stopped child cannot act on TERM.
			startGrace()
		case <-c.stop:
			unix.Kill(c.Pid, unix.SIGTERM) // Best effort.
			unix.Kill(c.Pid, unix.SIGCONT) // Best effort: a stopped child cannot act on TERM.
			startGrace()
		case <-kill:
			c.killAll()
		case now := <-c.jobs.C():
			c.jobs.runDue(now)
		}
	}
}

// keepSIGCHLD keeps SIGCHLD registered with os/signal from the first
// Supervise on: each registration and unregistration of a signal costs a
// round trip to the runtime's signal thread, and a channel nobody reads
// costs nothing (os/signal never blocks on it).
var keepSIGCHLD = sync.OnceFunc(func() {
	signal.Notify(make(chan os.Signal, 1), unix.SIGCHLD)
})

// reap reaps the child if it has ended, and then drains its output; it
// reports whether it has. A child stopped on its own terminal stops padrun
// too, as one job. The session's other dead processes are reaped too. When
// wait4 fails (ECHILD: the child was reaped elsewhere) the child is gone
// but how it ended is not known: err says so, and ws means nothing.
func (c *Child) reap() (ws unix.WaitStatus, ended bool, err error) {
	opts := unix.WNOHANG
	if c.io != nil && c.io.pty != nil {
		opts |= stopOpts // Ctrl-Z reaches the child through its terminal
	}
	for {
		pid, err := unix.Wait4(c.Pid, &ws, opts, nil)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return 0, true, &LostError{Pid: c.Pid, Err: err}
		case pid == 0:
			reapOthers(c.Pid)
			return ws, false, nil
		case ws.Stopped():
			c.io.suspend()
			continue
		}
		if c.io != nil {
			c.io.drain()
		}
		return ws, true, nil
	}
}

// forward passes sig on to the child, unless the terminal has delivered it
// already; it reports whether sig starts the grace period.
func (c *Child) forward(sig syscall.Signal) (ends bool) {
	if (sig == unix.SIGINT || sig == unix.SIGQUIT || sig == unix.SIGWINCH) && c.atTerminal() {
		return false
	}
	if sig == unix.SIGWINCH && c.io != nil && c.io.pty != nil {
		c.io.resize() // the kernel tells the child
		return false
	}
	if sig == unix.SIGCONT && c.io != nil && c.io.pty != nil {
		c.io.resume()          // back from a stop: the shell restored our terminal
		unix.Kill(-c.Pid, sig) // Best effort: the whole job on its terminal
		return false
	}
	unix.Kill(c.Pid, sig) // Best effort: the child may be exiting.
	return endsGrace(sig)
}

// Kill ends the session at once, without grace: SIGKILL to every process
// of it. For a harness that must be stopped before it writes.
func (c *Child) Kill() { c.killAll() }

// Stop asks Supervise to end the child as --timeout does: TERM (and
// CONT), then SIGKILL to every process of the session after the grace
// period. Unlike Terminate it may be called from any goroutine, and before
// Supervise runs; once the child is reaped it does nothing.
func (c *Child) Stop() {
	select {
	case c.stop <- struct{}{}:
	default: // asked already
	}
}

// Terminate asks the child to end, as --timeout does: TERM, and CONT so
// that a stopped child can act on it. Call it from a Job that Supervise
// runs: only there is the child known unreaped.
func (c *Child) Terminate() {
	unix.Kill(c.Pid, unix.SIGTERM) // Best effort.
	unix.Kill(c.Pid, unix.SIGCONT) // Best effort.
}

// killWait bounds the wait for what SIGKILL ends to be gone: a process in
// uninterruptible sleep dies only when its system call returns.
const killWait = 2 * time.Second

// settle is how long what the child left may take to end on its own (a
// git the harness started, finishing its command as the harness exits):
// what ends within it was not left running, and nobody is told of it. The
// time the session waited for a CPU or for I/O is not counted
// (cgroup.Clock): on a loaded machine a harness's last processes take
// longer to end by that much.
const settle = 250 * time.Millisecond

// EndRest ends what the child left of its session once the child has been
// reaped: what is still there after settle gets TERM (and CONT, so that a
// stopped process can act on it), then SIGKILL after grace. found, when
// set, is told first which processes were left. It returns those that
// outlived it all, and never waits longer than settle (stretched at most
// cgroup.MaxStretch times by the session's waits for the machine), grace
// and killWait.
// A run that left nothing costs one small read or one wait call.
func (c *Child) EndRest(grace time.Duration, found func(pids []int)) (survivors []int) {
	defer c.jobs.stop()
	if len(c.rest()) == 0 { // first of all one look: most runs leave nothing
		return nil
	}
	if c.waitRest(cgroup.StartClock(settle, c.stalled)) {
		return nil
	}
	rest := c.rest()
	if len(rest) == 0 {
		return nil
	}
	if found != nil {
		found(rest)
	}
	c.signalRest(unix.SIGTERM)
	c.signalRest(unix.SIGCONT)
	if c.waitRest(cgroup.StartClock(grace, nil)) {
		return nil
	}
	c.signalRest(unix.SIGKILL)
	if c.waitRest(cgroup.StartClock(killWait, nil)) {
		return nil
	}
	return c.rest()
}

// waitRest waits, until clock runs out, for the session's processes to be
// gone.
func (c *Child) waitRest(clock cgroup.Clock) bool {
	for {
		if len(c.rest()) == 0 {
			return true
		}
		if clock.Left() == 0 {
			return false
		}
		c.jobs.runDue(time.Now())
		time.Sleep(waitRestEvery)
	}
}
