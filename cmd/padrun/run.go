package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/padrun/padrun/marker"
	"github.com/padrun/padrun/supervise"
	"github.com/padrun/padrun/wrapper"
)

// Exit statuses of padrun itself; otherwise it exits as its child did.
const (
	exitRefused       = 75
	exitTimeout       = 124
	exitFailed        = 125
	exitNotExecutable = 126
	exitNotFound      = 127
)

const usage = `usage: padrun [flags] -- COMMAND [ARG...]
       padrun status [--json] FILE...
       padrun unlock [--force] FILE...
       padrun ls [--all] [--json] [--agent NAME] [--cwd DIR]
       padrun prune [--older-than DURATION] [--json]
       padrun version | help

Runs COMMAND as a supervised child that is the only live writer of its
session files. Exit status: the child's; 75 refused; 124 timed out;
125 padrun failed; 126 not executable; 127 not found.

The session is the child and every process it starts. When the child exits,
what it left running gets TERM, then KILL after --grace, and padrun says so;
then padrun exits with the child's status. A process that outlives even KILL
keeps the files held. If padrun itself is killed, the files stay held until
the last process of its session is gone: the next run is refused, naming it.

flags:
`

// usageError is a bad command line: exit 125 with a hint.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// run runs padrun with args and returns its exit status. It returns only
// when padrun did not die by a signal.
func run(args []string) int {
	stderr := os.Stderr
	if len(args) > 0 {
		if verb, ok := verbs[args[0]]; ok {
			return verb(args[1:], os.Stdout, stderr)
		}
	}
	o, logs, err := parseRun(args, stderr)
	if err != nil {
		return exit(err, logs, stderr)
	}
	st, err := wrapper.Run(o)
	if err != nil {
		return exit(err, logs, stderr)
	}
	switch {
	case st.TimedOut:
		return exitTimeout
	case st.Signal != 0:
		supervise.Raise(st.Signal)
		return 128 + int(st.Signal)
	}
	return st.Code
}

// runFlags holds the command-line settings of a run.
type runFlags struct {
	wrapper.Options
	logs logFlags
}

func (f *runFlags) addFlags(fs *pflag.FlagSet) {
	fs.StringArrayVar(&f.Guards, "guard", nil, "guard the session file `PATH` too (repeatable)")
	fs.StringVar(&f.Harness, "harness", "", "read the command line as `NAME`'s: pi, claude, codex or none (default: by command name)")
	fs.StringVar(&f.Agent, "agent", "", "record the agent `NAME`")
	fs.DurationVar(&f.Wait, "wait", 0, "wait up to `DURATION` for a held session file, then refuse")
	fs.DurationVar(&f.Timeout, "timeout", 0, "end the child after `DURATION` (exit 124)")
	fs.DurationVar(&f.Grace, "grace", 10*time.Second, "time between TERM and KILL when ending the child, or what it left running")
	fs.DurationVar(&f.Heartbeat, "heartbeat", wrapper.DefaultHeartbeat, "refresh the marker every `DURATION` for other machines, which take over 3 intervals after a crash (0: off)")
	fs.BoolVar(&f.Strict, "strict", false, "refuse when the session file cannot be named before the harness runs")
	fs.BoolVar(&f.NoPin, "no-pin", false, "pass the harness's argv untouched, without pinning the resolved session")
	fs.BoolVar(&f.NoCompanion, "no-companion", false, "load no companion into pi or claude: session switches inside the harness are then unguarded")
	fs.BoolVar(&f.Pty, "pty", false, "run the child on a new pseudo-terminal (for harnesses that need a tty)")
	fs.StringVar(&f.Record, "record", "", "write the session's output to `FILE` too (0600)")
	f.logs.addFlags(fs)
}

func parseRun(args []string, stderr io.Writer) (wrapper.Options, logs, error) {
	var f runFlags
	fs := pflag.NewFlagSet("padrun", pflag.ContinueOnError)
	fs.SetInterspersed(false)
	fs.SetOutput(io.Discard)
	f.addFlags(fs)
	help := fs.BoolP("help", "h", false, "show this help")
	logs := newLogger(logFlags{}, stderr)
	if err := fs.Parse(args); err != nil {
		return f.Options, logs, &usageError{err.Error()}
	}
	if *help {
		fmt.Fprint(os.Stdout, usage+fs.FlagUsages())
		return f.Options, logs, errHelp
	}
	logs, err := f.logs.logger(stderr)
	if err != nil {
		return f.Options, logs, err
	}
	if fs.NArg() == 0 {
		return f.Options, logs, &usageError{"no command given"}
	}
	if f.Wait < 0 || f.Timeout < 0 || f.Grace < 0 || f.Heartbeat < 0 {
		return f.Options, logs, &usageError{"durations must not be negative"}
	}
	f.Command, f.Log, f.Stderr = fs.Args(), logs.Logger, stderr
	return f.Options, logs, nil
}

var errHelp = errors.New("help")

// exit is the one place where an error becomes an exit status.
func exit(err error, logs logs, stderr io.Writer) int {
	var (
		held   *marker.HeldError
		unsafe *marker.UnsafeError
		exe    *supervise.ExecError
		abort  *wrapper.AbortError
		bad    *usageError
		wusage *wrapper.UsageError
	)
	switch {
	case errors.Is(err, errHelp):
		return 0
	case errors.As(err, &held):
		for _, line := range wrapper.Refusal(held, time.Now()) {
			fmt.Fprintln(stderr, "padrun: "+line)
		}
		refusalEvent(logs, held)
		return exitRefused
	case errors.As(err, &abort):
		supervise.Raise(abort.Signal)
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
		fmt.Fprintf(stderr, "padrun: hint: padrun never follows or replaces it; inspect it with: ls -l %s\n", unsafe.Path)
		return exitFailed
	case errors.As(err, &bad):
		fmt.Fprintln(stderr, "padrun: "+bad.msg)
		fmt.Fprintln(stderr, "padrun: hint: padrun [flags] -- COMMAND [ARG...]; see padrun --help")
		return exitFailed
	case errors.As(err, &wusage):
		fmt.Fprintln(stderr, "padrun: "+wusage.Msg)
		return exitFailed
	}
	fmt.Fprintln(stderr, "padrun: "+err.Error())
	var hinted interface{ Hint() string }
	if errors.As(err, &hinted) {
		fmt.Fprintln(stderr, "padrun: hint: "+hinted.Hint())
	}
	return exitFailed
}

func refusalEvent(logs logs, e *marker.HeldError) {
	if !logs.json {
		return
	}
	ev := logs.Error().Str("event", "refused").Str("file", e.File).
		Str("verdict", e.Judgement.Verdict.String()).Str("reason", e.Judgement.Reason).Bool("busy", e.Busy)
	if m := e.Holder; m != nil {
		ev = ev.Str("holder_tool", m.Tool).Int("holder_pid", m.Pid).Int("holder_child_pid", m.ChildPid).
			Str("holder_agent", m.Agent).Str("holder_host", m.Hostname).Str("holder_since", m.CreatedAt)
	}
	ev.Msg("refused: " + e.File + " is in use by another session")
}
