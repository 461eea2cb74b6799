package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/pflag"

	"github.com/padrun/padrun/marker"
	"github.com/padrun/padrun/wrapper"
	"github.com/padrun/padrun/wrapper/harness"
)

// Exit statuses of padrun itself; otherwise it exits as its child did.
const (
	exitRefused = 75
	// exitLost: the hold was lost, and padrun stopped the session: its
	// lease in etcd could not be kept alive, or a new session file the
	// child created was another session's by the time padrun claimed it.
	exitLost          = 76
	exitTimeout       = 124
	exitFailed        = 125
	exitNotExecutable = 126
	exitNotFound      = 127
)

// greetingWait is how long a companion has to greet padrun (0: the
// default); only the tests change it.
var greetingWait time.Duration

// warnHook is told every warning padrun gives; only the tests set it, to
// count them.
var warnHook zerolog.Hook

// usageHint is what a bad command line of the run is told.
const usageHint = "padrun [flags] -- COMMAND [ARG...]; see padrun --help"

// usagef is a bad command line of the run: exit 125 with a hint.
func usagef(format string, args ...any) error {
	return &wrapper.UsageError{Err: fmt.Errorf(format, args...), Advice: usageHint}
}

// exitStatus is an exit status whose reason was already printed.
type exitStatus int

func (e exitStatus) Error() string { return "exit status " + strconv.Itoa(int(e)) }

// run runs padrun with args and returns its exit status. It returns only
// when padrun did not die by a signal.
func run(args []string) int {
	stderr := newShownWriter(os.Stderr) // every message one line, no raw control character
	if len(args) > 0 {
		if v := findVerb(args[0]); v != nil {
			return exit(v.runVerb(args[1:], os.Stdout, stderr), logs{}, stderr, wording{now: time.Now()}, nil)
		}
	}
	o, logs, queue, w, err := parseRun(args, stderr)
	if err != nil {
		return exit(err, logs, stderr, w, nil)
	}
	res, err := wrapper.Run(o)
	if err != nil {
		w.now = time.Now()
		code := exit(err, logs, stderr, w, queue)
		if code == exitNotFound && len(args) > 0 && len(o.Command) > 0 && args[0] == o.Command[0] {
			if v := nearVerb(args[0]); v != "" {
				fmt.Fprintf(stderr, "padrun: hint: did you mean padrun %s?\n", v)
			}
		}
		return code
	}
	switch {
	case res.TimedOut:
		how := "TERM"
		if res.Signal == syscall.SIGKILL {
			how = "KILL, after a grace of " + o.Grace.String()
		}
		fmt.Fprintf(stderr, "padrun: --timeout %s ran out: ended the child (%s)\n", o.Timeout, how)
		return exitTimeout
	case res.Signal != 0:
		raise(res.Signal)
		return 128 + int(res.Signal)
	}
	return res.Code
}

// mainArgs are padrun's arguments, os.Args[1:]; started under a harness's
// name (an entry of a session's folder of harness entries, or an alias made
// by ln -s padrun ~/bin/pi), padrun runs as padrun -- NAME ARGS...
// (docs/spec.md §7), and names itself again (its hooks, a refusal's hint)
// by its executable.
func mainArgs() []string {
	name := filepath.Base(os.Args[0])
	if !wrapper.IsHarnessCommand(name) {
		return os.Args[1:]
	}
	if exe, err := os.Executable(); err == nil {
		os.Args[0] = exe
	}
	return append([]string{"--", name}, os.Args[1:]...)
}

// runFlags holds the command-line settings of a run.
type runFlags struct {
	wrapper.Options
	verbose bool
	logs    logFlags
	etcd    etcdFlags
}

func (f *runFlags) addFlags(fs *pflag.FlagSet) {
	fs.StringArrayVar(&f.Guards, "guard", nil, "guard the session file `PATH` too (repeatable; opencode:ID and kilo:ID name a session of their database)")
	fs.StringVar(&f.Harness, "harness", "", "read the command line as `NAME`'s: "+harness.List(append(harness.Names(), harness.None), "or")+" (default: by command name)")
	fs.StringVar(&f.Agent, "agent", "", "record the agent `NAME`")
	durationVar(fs, &f.Wait, "wait", 0, "wait up to `DURATION` for a held session file, then refuse (a bare number is seconds)")
	durationVar(fs, &f.Timeout, "timeout", 0, "end the child after `DURATION` (exit 124; a bare number is seconds)")
	durationVar(fs, &f.Grace, "grace", 10*time.Second, "wait `DURATION` between TERM and KILL when ending the child, or what it left running")
	durationVar(fs, &f.Heartbeat, "heartbeat", wrapper.DefaultHeartbeat, "refresh the marker every `DURATION` for other machines, which take over 3 intervals after a crash (0: off; else at least 1s)")
	fs.BoolVar(&f.Strict, "strict", false, "refuse when the session file cannot be named before the harness runs (a picker, claude --bg, codex --last)")
	fs.BoolVar(&f.NoPin, "no-pin", false, "pass the harness's argv untouched, without pinning the resolved session")
	fs.BoolVar(&f.NoCompanion, "no-companion", false, "load no companion into "+harness.List(harness.Companions(), "or")+": session switches inside the harness are then unguarded")
	fs.BoolVar(&f.NoNestedGuard, "no-nested-guard", false, "leave PATH alone: a harness started inside the session (an agent's own pi -c) does not run under padrun")
	fs.BoolVar(&f.Pty, "pty", false, "run the child on a new pseudo-terminal (for harnesses that need a tty)")
	fs.BoolVarP(&f.verbose, "verbose", "v", false, "explain a refusal: the verdict and its reasoning")
	fs.StringVar(&f.Transcript, "record", "", "write the session's output to `FILE` too (0600)")
	f.etcd.addFlags(fs)
	f.logs.addFlags(fs)
}

// parseRun reads the run's command line. queue is the same command line
// with --wait 10m inserted, for the refusal's hint; w words its refusals.
func parseRun(args []string, stderr io.Writer) (wrapper.Options, logs, []string, wording, error) {
	var f runFlags
	w := wording{now: time.Now()}
	fs := newFlagSet("padrun")
	fs.SetInterspersed(false)
	f.addFlags(fs)
	version := fs.BoolP("version", "V", false, "print the version and exit")
	help := fs.BoolP("help", "h", false, "show this help")
	logs := newLogger(logFlags{}, stderr)
	if err := parseFlags(fs, args, false, usageHint); err != nil {
		return f.Options, logs, nil, w, err
	}
	switch {
	case *help:
		mainHelp(os.Stdout)
		return f.Options, logs, nil, w, errHelp
	case *version:
		fmt.Fprint(os.Stdout, versionText())
		return f.Options, logs, nil, w, errHelp
	}
	logs, err := f.logs.logger(stderr)
	if err != nil {
		return f.Options, logs, nil, w, err
	}
	if fs.NArg() == 0 {
		return f.Options, logs, nil, w, usagef("no command given")
	}
	if f.Wait < 0 || f.Timeout < 0 || f.Grace < 0 || f.Heartbeat < 0 {
		return f.Options, logs, nil, w, usagef("durations must not be negative")
	}
	if f.Heartbeat > 0 && f.Heartbeat < time.Second {
		// Each beat rewrites the marker's mtime: a nanosecond one spins a core.
		return f.Options, logs, nil, w, usagef("--heartbeat %s is below 1s: give at least 1s, or 0 to turn it off", f.Heartbeat)
	}
	if f.Etcd, err = f.etcd.config(); err != nil {
		return f.Options, logs, nil, w, err
	}
	f.SessionKey = f.etcd.sessions
	f.Guards = sessionArgs(f.Guards)
	f.Command, f.Log, f.Stderr = fs.Args(), logs.Logger, stderr
	f.Env = wrapper.ReadEnv()
	f.LogFile = logs.file
	f.Greeting = greetingWait
	w.cwd, _ = os.Getwd()     // Best effort: paths are then shown whole.
	w.host, _ = os.Hostname() // Best effort: a holder's host is then always named.
	w.verbose = f.verbose
	f.OnWait = func(held *marker.HeldError) {
		w := w
		w.now = time.Now()
		fmt.Fprintf(stderr, "padrun: waiting up to %s for %s: %s\n", f.Wait, w.path(held.File), w.describe(held))
	}
	f.Refusal = func(err error) []string { // no command line to queue: a switch inside the harness
		w := w
		w.now = time.Now()
		return w.refusal(err, nil)
	}
	f.Toast = func(err error) []string {
		w := w
		w.now = time.Now()
		return w.toast(err)
	}
	return f.Options, logs, queueCommand(os.Args[0], args, len(args)-fs.NArg()), w, nil
}

var errHelp = errors.New("help")

// queueCommand is padrun's command line with --wait 10m inserted before
// the command (after any --wait of its own, so that it wins).
func queueCommand(argv0 string, args []string, cmdAt int) []string {
	at := cmdAt
	if at > 0 && args[at-1] == "--" {
		at--
	}
	out := append([]string{argv0}, args[:at]...)
	out = append(out, "--wait", "10m")
	return append(out, args[at:]...)
}

// exit is the one place where an error becomes an exit status; w words a
// refusal of the run whose command line queue would queue.
func exit(err error, logs logs, stderr io.Writer, w wording, queue []string) int {
	var (
		status exitStatus
		held   *marker.HeldError
		unsafe *marker.UnsafeError
		exe    *wrapper.ExecError
		abort  *wrapper.AbortError
		fenced *wrapper.FencedError
		lost   *wrapper.LostHoldError
	)
	switch {
	case err == nil, errors.Is(err, errHelp):
		return 0
	case errors.As(err, &status):
		return int(status)
	case errors.As(err, &held):
		for _, line := range w.refusal(err, queue) {
			fmt.Fprintln(stderr, "padrun: "+line)
		}
		refusalEvent(logs, held)
		return exitRefused
	case errors.As(err, &fenced):
		printError(stderr, err)
		return exitLost
	case errors.As(err, &lost):
		fmt.Fprintln(stderr, "padrun: "+shown(lost.Error()))
		fmt.Fprintln(stderr, "padrun:   holder: "+shown(w.holderOf(lost.Held)))
		if w.verbose {
			fmt.Fprintln(stderr, "padrun:   verdict: "+shown(lost.Held.Judgement.String()))
		}
		fmt.Fprintln(stderr, "padrun: hint: "+shown(lost.Hint()))
		return exitLost
	case errors.As(err, &abort):
		raise(abort.Signal)
		return 128 + int(abort.Signal)
	case errors.As(err, &exe):
		if exe.NotExecutable {
			fmt.Fprintf(stderr, "padrun: %s: cannot execute: %v\n", exe.Name, exe.Err)
			return exitNotExecutable
		}
		fmt.Fprintf(stderr, "padrun: %s: command not found\n", exe.Name)
		return exitNotFound
	case errors.As(err, &unsafe):
		fmt.Fprintf(stderr, "padrun: %s %s\n", unsafe.Path, unsafe.Why)
		q := pasteQuote(unsafe.Path)
		fmt.Fprintf(stderr, "padrun: hint: padrun's lock is a regular file: check who made this one (ls -l %s), then remove it (rm %s)\n", q, q)
		return exitFailed
	}
	printError(stderr, err)
	return exitFailed
}

func refusalEvent(logs logs, e *marker.HeldError) {
	if !logs.json {
		return
	}
	ev := logs.Error().Str("event", "refused").Str("file", e.File).
		Str("verdict", e.Judgement.Verdict.String()).Str("reason", e.Judgement.Reason).Bool("busy", e.Kind == marker.HeldBusy)
	if m := e.Holder; m != nil {
		ev = ev.Str("holder_tool", m.Tool).Int("holder_pid", m.Pid).Int("holder_child_pid", m.ChildPid).
			Str("holder_agent", m.Agent).Str("holder_host", m.Hostname).Str("holder_since", m.CreatedAt)
	}
	ev.Msg("refused: " + e.File + " is in use by another session")
}
