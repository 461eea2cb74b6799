//go:build unix

package supervise

import (
	"errors"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/padrun/padrun/supervise/childtest"
)

// grace is the grace period of the tests: short, as their children either
// handle TERM at once or ignore it.
const grace = 100 * time.Millisecond

func TestMain(m *testing.M) { os.Exit(childtest.Main(m, helpers)) }

// helpers are the children the tests start (helper), each by its name.
var helpers = map[string]func(){
	"exit7": func() { os.Exit(7) },
	"ignore-term": func() {
		signal.Ignore(syscall.SIGTERM)
		ready()
		time.Sleep(time.Hour) // hang until a signal ends it
	},
	"trap-term": func() {
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGTERM)
		ready()
		<-c
	},
	"hang": func() {
		ready()
		time.Sleep(time.Hour) // hang until a signal ends it
	},
}

func ready() {
	os.WriteFile(os.Getenv("READY"), []byte("ok"), 0o600)
}

func helper(t *testing.T, mode string) (Spec, string) {
	runtime.LockOSThread() // the parent-death signal follows the forking thread
	readyFile := filepath.Join(t.TempDir(), "ready")
	return Spec{
		Path: os.Args[0],
		Args: []string{os.Args[0]},
		Env:  append(os.Environ(), childtest.Env(mode), "READY="+readyFile),
	}, readyFile
}

func waitReady(t *testing.T, path string) {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
	t.Fatal("helper never became ready")
}

func run(t *testing.T, s Spec, sigs chan os.Signal, timeout time.Duration) Status {
	c, err := Start(s)
	if err != nil {
		t.Fatal(err)
	}
	return c.Supervise(sigs, grace, timeout)
}

// runReady starts the helper and supervises it with the timeout once it is
// ready: the timeout must not run out before the helper set its signals up.
func runReady(t *testing.T, s Spec, readyFile string, timeout time.Duration) Status {
	c, err := Start(s)
	if err != nil {
		t.Fatal(err)
	}
	waitReady(t, readyFile)
	return c.Supervise(nil, grace, timeout)
}

func TestSupervise_ExitStatusIsTheChilds(t *testing.T) {
	s, _ := helper(t, "exit7")
	if st := run(t, s, nil, 0); st.Code != 7 || st.Signal != 0 || st.TimedOut {
		t.Fatalf("status %+v, want exit 7", st)
	}
}

// A child reaped by someone else (wait4 says ECHILD) has an unknown end:
// Supervise says so and never reports it as an exit 0.
func TestSupervise_ReapedElsewhere_IsLostNotZero(t *testing.T) {
	s, _ := helper(t, "exit7")
	c, err := Start(s)
	if err != nil {
		t.Fatal(err)
	}
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(c.Pid, &ws, 0, nil); err != nil || !ws.Exited() {
		t.Fatalf("wait4 of the helper: %v, %v", err, ws)
	}
	st := c.Supervise(nil, grace, 0)
	var lost *LostError
	if !errors.As(st.Err, &lost) || lost.Pid != c.Pid || !errors.Is(st.Err, syscall.ECHILD) {
		t.Fatalf("status %+v, want a *LostError of pid %d wrapping ECHILD", st, c.Pid)
	}
}

func TestSupervise_ForwardsTERM(t *testing.T) {
	s, readyFile := helper(t, "trap-term")
	sigs := make(chan os.Signal, 1)
	c, err := Start(s)
	if err != nil {
		t.Fatal(err)
	}
	waitReady(t, readyFile)
	sigs <- syscall.SIGTERM
	if st := c.Supervise(sigs, time.Minute, 0); st.Code != 0 || st.Signal != 0 {
		t.Fatalf("status %+v, want exit 0 after a trapped TERM", st)
	}
}

func TestSupervise_GraceThenKill(t *testing.T) {
	s, readyFile := helper(t, "ignore-term")
	sigs := make(chan os.Signal, 1)
	c, err := Start(s)
	if err != nil {
		t.Fatal(err)
	}
	waitReady(t, readyFile)
	sigs <- syscall.SIGTERM
	if st := c.Supervise(sigs, grace, 0); st.Signal != syscall.SIGKILL {
		t.Fatalf("status %+v, want death by KILL after the grace", st)
	}
}

func TestSupervise_TimeoutEndsTheChild(t *testing.T) {
	s, readyFile := helper(t, "hang")
	if st := runReady(t, s, readyFile, 50*time.Millisecond); !st.TimedOut || st.Signal != syscall.SIGTERM {
		t.Fatalf("status %+v, want a timeout and death by TERM", st)
	}
}

func TestSupervise_TimeoutKillsAChildIgnoringTERM(t *testing.T) {
	s, readyFile := helper(t, "ignore-term")
	if st := runReady(t, s, readyFile, 50*time.Millisecond); !st.TimedOut || st.Signal != syscall.SIGKILL {
		t.Fatalf("status %+v, want a timeout and death by KILL", st)
	}
}

// Stop, from another goroutine, ends the child as a timeout does: TERM,
// then KILL after the grace for a child that ignores TERM.
func TestSupervise_StopEndsTheChild(t *testing.T) {
	for mode, want := range map[string]syscall.Signal{"hang": syscall.SIGTERM, "ignore-term": syscall.SIGKILL} {
		s, readyFile := helper(t, mode)
		c, err := Start(s)
		if err != nil {
			t.Fatal(err)
		}
		waitReady(t, readyFile)
		go c.Stop()
		if st := c.Supervise(nil, grace, 0); st.Signal != want || st.TimedOut {
			t.Fatalf("%s: status %+v, want death by %v", mode, st, want)
		}
		c.Stop() // the child is reaped: nothing is sent
	}
}

func TestLookPath_NotFoundAndNotExecutable(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "plain"), []byte("#!/bin/sh\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "tool"), []byte("#!/bin/sh\n"), 0o755)
	if p, err := LookPath("tool", dir); err != nil || p != filepath.Join(dir, "tool") {
		t.Errorf("LookPath(tool) = %q, %v", p, err)
	}
	var e *ExecError
	if _, err := LookPath("plain", dir); !asExec(err, &e) || !e.NotExecutable {
		t.Errorf("LookPath(plain) = %v, want not executable (126)", err)
	}
	if _, err := LookPath("absent", dir); !asExec(err, &e) || e.NotExecutable {
		t.Errorf("LookPath(absent) = %v, want not found (127)", err)
	}
	_, err := Start(Spec{Path: filepath.Join(dir, "plain"), Args: []string{"./plain"}})
	if !asExec(err, &e) || !e.NotExecutable {
		t.Errorf("Start(plain) = %v, want not executable", err)
	}
	_, err = Start(Spec{Path: filepath.Join(dir, "absent"), Args: []string{"./absent"}})
	if !asExec(err, &e) || e.NotExecutable {
		t.Errorf("Start(absent) = %v, want not found", err)
	}
}

func asExec(err error, e **ExecError) bool {
	var ok bool
	*e, ok = err.(*ExecError)
	return ok
}

func TestIsTerminal_TerminalYesPipeNo(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	defer tty.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if !IsTerminal(tty.Fd()) || IsTerminal(r.Fd()) {
		t.Fatalf("IsTerminal: terminal %v, pipe %v; want true, false", IsTerminal(tty.Fd()), IsTerminal(r.Fd()))
	}
}

// A harness's command passes over padrun's own executable in PATH, under
// any name (a symlink or a hard link to it): padrun started as pi runs the
// real pi further down, never itself.
func TestLookPathNotSelf_SkipsOwnExecutable(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	shims, real := t.TempDir(), t.TempDir()
	if err := os.Symlink(exe, filepath.Join(shims, "pi")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(real, "pi"), []byte("#!/bin/sh\n"), 0o755)
	path := shims + string(filepath.ListSeparator) + real
	if p, err := LookPathNotSelf("pi", path); err != nil || p != filepath.Join(real, "pi") {
		t.Errorf("LookPathNotSelf(pi) = %q, %v, want %s", p, err, filepath.Join(real, "pi"))
	}
	if p, err := LookPath("pi", path); err != nil || p != filepath.Join(shims, "pi") {
		t.Errorf("LookPath(pi) = %q, %v, want the first entry, %s", p, err, filepath.Join(shims, "pi"))
	}
	var e *ExecError
	if _, err := LookPathNotSelf("pi", shims); !asExec(err, &e) || e.NotExecutable {
		t.Errorf("LookPathNotSelf(pi) with only padrun in PATH = %v, want not found (127)", err)
	}
}
