//go:build linux

package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// fakeHarness stands in for an agent harness in the end-to-end tests. It
// appends start and end lines to a session file, writes a ready file once
// its signal handling is in place, and then exits, dies by a signal, hangs,
// or copies stdin to stdout, as its flags say.
func fakeHarness() {
	var (
		appendTo = flag.String("append", "", "append start/end lines to this session `file`")
		ready    = flag.String("ready", "", "write padrun=PID and child=PID to this `file` when ready")
		exit     = flag.Int("exit", 0, "exit with this status")
		die      = flag.String("die", "", "die by this signal (TERM, KILL, USR1, ...)")
		hang     = flag.Bool("hang", false, "wait for a signal before ending")
		hold     = flag.Duration("hold", 0, "hold the session this long between start and end")
		ignore   = flag.String("ignore", "", "comma-separated signals to ignore")
		trap     = flag.String("trap", "", "comma-separated signals to log to -log and survive")
		trapExit = flag.Int("trap-exit", -1, "exit with this status on the first trapped signal")
		logTo    = flag.String("log", "", "append trapped signals to this `file`")
		env      = flag.String("env", "", "comma-separated variables to print as NAME=value")
		cat      = flag.Bool("cat", false, "copy stdin to stdout")
		tty      = flag.Bool("tty", false, "print tty=yes when stdin is a terminal, else tty=no")
		size     = flag.Bool("size", false, "log the terminal size with each trapped signal")
		_        = flag.String("session", "", "a pinned session file, as pi takes it (ignored)")
		_        = flag.Int("round", 0, "a tag for tests to find the process by (ignored)")
		ignored  = flag.Bool("ignored", false, "print which of HUP, INT and QUIT were ignored at start")
		write    = flag.String("write", "", "append a line to this session `file` every 10ms until -until exists")
		until    = flag.String("until", "", "the `file` whose existence ends -write")
		byFd     = flag.Bool("fd", false, "-write through one descriptor opened at start, not by name each time")
		mkdir    = flag.Bool("mkdir", false, "-write by name makes the file's folder first, as a harness does")
	)
	flag.CommandLine.Init("fakeharness", flag.ExitOnError)
	flag.Parse()
	unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{}) // no core files from QUIT

	if *ignored {
		for _, sig := range []syscall.Signal{unix.SIGHUP, unix.SIGINT, unix.SIGQUIT} {
			fmt.Printf("%s=%v\n", strings.TrimPrefix(unix.SignalName(sig), "SIG"), map[bool]string{true: "ignored", false: "default"}[signal.Ignored(sig)])
		}
	}
	for _, name := range split(*ignore) {
		signal.Ignore(sigByName(name))
	}
	trapped := make(chan os.Signal, 16)
	for _, name := range split(*trap) {
		signal.Notify(trapped, sigByName(name))
	}
	// Other signals kill it as they would a C program: the Go runtime would
	// ignore USR1, and exit 2 with a goroutine dump on QUIT, ABRT or SEGV.
	fatal := make(chan os.Signal, 1)
	for _, sig := range []syscall.Signal{unix.SIGHUP, unix.SIGINT, unix.SIGQUIT, unix.SIGTERM, unix.SIGUSR1, unix.SIGUSR2,
		unix.SIGABRT, unix.SIGSEGV, unix.SIGBUS, unix.SIGFPE, unix.SIGILL, unix.SIGSYS, unix.SIGTRAP} {
		if !signal.Ignored(sig) && !strings.Contains(","+*trap+",", ","+strings.TrimPrefix(unix.SignalName(sig), "SIG")+",") {
			signal.Notify(fatal, sig)
		}
	}
	go func() { dieBy((<-fatal).(syscall.Signal)) }()
	if *tty {
		_, err := unix.IoctlGetTermios(0, unix.TCGETS)
		fmt.Printf("tty=%s\n", map[bool]string{true: "yes", false: "no"}[err == nil])
	}
	for _, name := range split(*env) {
		v, ok := os.LookupEnv(name)
		if !ok {
			v = "<unset>"
		}
		fmt.Printf("%s=%s\n", name, v)
	}
	if *appendTo != "" {
		appendLine(*appendTo, fmt.Sprintf("start %d", os.Getpid()))
	}
	var lines func()
	if *write != "" {
		lines = writeLines(*write, *until, *byFd, *mkdir)
	}
	if *ready != "" {
		tmp := *ready + ".tmp"
		data := fmt.Sprintf("padrun=%s\nchild=%d\n", os.Getenv("PAD_SESSION_PID"), os.Getpid())
		check(os.WriteFile(tmp, []byte(data), 0o600))
		check(os.Rename(tmp, *ready))
	}
	if lines != nil {
		lines()
	}
	if *cat {
		_, err := io.Copy(os.Stdout, os.Stdin)
		check(err)
	}
	if *hold > 0 {
		time.Sleep(*hold) // the session's work, not synchronisation
	}
	if *hang || *trap != "" {
		for s := range trapped {
			if *logTo != "" {
				appendLine(*logTo, "got "+strings.TrimPrefix(unix.SignalName(s.(syscall.Signal)), "SIG"))
				if ws, err := unix.IoctlGetWinsize(0, unix.TIOCGWINSZ); *size && err == nil {
					appendLine(*logTo, fmt.Sprintf("size %d %d", ws.Row, ws.Col))
				}
			}
			if *trapExit >= 0 {
				if *appendTo != "" {
					appendLine(*appendTo, fmt.Sprintf("end %d", os.Getpid()))
				}
				os.Exit(*trapExit)
			}
		}
	}
	if *appendTo != "" {
		appendLine(*appendTo, fmt.Sprintf("end %d", os.Getpid()))
	}
	if *die != "" {
		dieBy(sigByName(*die))
	}
	os.Exit(*exit)
}

// dieBy makes this process die by sig with the default action, through a
// shell that keeps its pid.
func dieBy(sig syscall.Signal) {
	name := strings.TrimPrefix(unix.SignalName(sig), "SIG")
	check(unix.Exec("/bin/sh", []string{"sh", "-c", "kill -" + name + " $$; sleep 5"}, os.Environ()))
}

// writeLines writes the first line of -write to path at once, and returns
// what writes the rest, "w <pid>" every 10ms, until the file until exists:
// through one descriptor (byFd), or opening path by name each time, as a
// harness that appends by name does, making its folder first with mkdir.
func writeLines(path, until string, byFd, mkdir bool) func() {
	line := fmt.Sprintf("w %d\n", os.Getpid())
	var f *os.File
	if byFd {
		var err error
		f, err = os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		check(err)
	}
	one := func() {
		if f != nil {
			_, err := f.WriteString(line)
			check(err)
			return
		}
		if mkdir {
			check(os.MkdirAll(filepath.Dir(path), 0o700))
		}
		appendLine(path, strings.TrimSuffix(line, "\n"))
	}
	one()
	return func() {
		for {
			if _, err := os.Stat(until); err == nil {
				return
			}
			time.Sleep(10 * time.Millisecond) // the session's pace, not synchronisation
			one()
		}
	}
}

func appendLine(path, line string) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	check(err)
	_, err = f.WriteString(line + "\n")
	check(err)
	check(f.Close())
}

func split(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func sigByName(name string) syscall.Signal {
	if n, err := strconv.Atoi(name); err == nil {
		return syscall.Signal(n)
	}
	s := unix.SignalNum("SIG" + strings.TrimPrefix(strings.ToUpper(name), "SIG"))
	if s == 0 {
		fmt.Fprintf(os.Stderr, "fakeharness: unknown signal %s\n", name)
		os.Exit(2)
	}
	return s
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakeharness:", err)
		os.Exit(2)
	}
}
