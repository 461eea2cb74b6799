package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/padrun/padrun/wrapper"
	"github.com/padrun/padrun/wrapper/harness"
)

// The help text is data: the same verbs, flags and variables make the help,
// the completion scripts and the man page.

const summary = "run an AI coding-agent harness as the only live writer of its session files"

// description is padrun's own, its harnesses named as padrun knows them;
// like envVars, put together when help asks (a run does not).
var description = sync.OnceValue(func() string {
	return wrap(`Runs COMMAND as a supervised child that is the only live writer of its
session files. The files come from the harness's command line
(`+strings.Join(harness.Names(), ", ")+`) and from --guard. A file held by another live session is refused
(exit 75), or waited for with --wait. Everything after --, or from the first
word that is not a flag, belongs to the child and is passed untouched.`, 76) + `

The session is the child and every process it starts. When the child exits,
what it left running gets TERM, then KILL after --grace, and padrun says so;
then padrun exits with the child's status. A process that outlives even KILL
keeps the files held. If padrun itself is killed, the files stay held until
the last process of its session is gone: the next run is refused, naming it.`
})

// envVar is an environment variable padrun reads.
type envVar struct{ name, desc string }

// envVars lists every variable padrun reads (TestHelp_NamesEveryVariable
// checks this against the code).
var envVars = sync.OnceValue(func() []envVar {
	return slices.Concat([]envVar{
		{"PADRUN_REGISTRY_DIR", "the registry folder (default ~/.pad/sessions)"},
		{"PADRUN_LOG_LEVEL", "log level, as --log-level"},
		{"PADRUN_LOG_FORMAT", "log format, as --log-format"},
		{"PADRUN_LOG_FILE", "log file, as --log-file"},
		{"PADRUN_ETCD", "etcd's endpoints, as --etcd"},
		{"PAD_SESSION_PID", "the outer session, when padrun runs inside one (a positive integer)"},
		{"PAD_AGENT", "the agent name when neither --agent nor .pad.toml gives one"},
	}, harnessEnv(), []envVar{
		{"PADRUN_CONTROL", "set by padrun for the child: the control socket its companion (claude's and gemini's hooks) claims files through"},
		{"XDG_RUNTIME_DIR", "where padrun puts its control sockets and folders of harness entries (else a padrun-UID folder in the temp folder)"},
		{"XDG_STATE_HOME", "padrun's state folder is its padrun/ (else ~/.local/state/padrun): the untested harness releases it warned about"},
		{"PATH", "where COMMAND is looked up, past padrun itself for a harness; the child's starts with padrun's folder of harness entries (see --no-nested-guard)"},
		{"HOME", "the home folder (registry, harness folders, ~ in ls)"},
		{"COLUMNS", "the width ls fits its table to (default: the terminal's)"},
	})
})

// harnessEnv is what the harnesses' adapters read of the environment.
func harnessEnv() []envVar {
	var out []envVar
	seen := map[string]bool{}
	for _, name := range harness.Names() {
		a, _ := harness.Lookup(name)
		for _, v := range a.Env {
			if !seen[v.Name] { // opencode's and kilo's data folder
				seen[v.Name] = true
				out = append(out, envVar{v.Name, v.Desc})
			}
		}
	}
	return out
}

// exitStatuses are padrun's exit statuses, for people.
var exitStatuses = []envVar{
	{"the child's", "the child exited; a child killed by a signal makes padrun die by it too"},
	{"75", "refused: a session file is held, or its holder cannot be judged, or --wait ran out"},
	{"76", "the hold was lost, and padrun stopped the session: its lease in etcd could not be kept alive (stopped before another machine could take it), or a new session file the child created was held by another session by the time padrun claimed it"},
	{"124", "--timeout ran out"},
	{"125", "padrun itself failed: usage, an unwritable marker or registry, a bad PAD_SESSION_PID"},
	{"126", "COMMAND was found but cannot be executed"},
	{"127", "COMMAND was not found"},
}

// examples are what the help and the man page show first: a command line,
// and what it does.
var examples = []envVar{
	{`padrun -- pi -p --session s.jsonl "fix the test"`, "run pi as the only writer of s.jsonl: a second run on it is refused (75)"},
	{"padrun --wait 10m -- claude -c", "continue claude's latest session once its holder has ended"},
	{"padrun --guard notes.md -- aider", "guard any file, for a program padrun does not know"},
	{"padrun ls", "the sessions running now, and the runs queued behind them"},
	{"padrun status s.jsonl", "who holds s.jsonl, and why padrun thinks so"},
	{"alias pi='padrun -- pi'", "always run pi guarded (examples/aliases.* has every harness)"},
}

// verb is one of padrun's subcommands.
type verb struct {
	name     string
	args     string // the synopsis after the flags, e.g. "FILE..."
	short    string // one line, for lists
	summary  string
	min, max int  // how many arguments it takes; max -1: no limit
	hidden   bool // run by padrun's companions, not by people: left out of help and completion
	// setup declares the verb's flags and returns what runs it.
	setup func(fs *pflag.FlagSet) func(args []string, stdout, stderr io.Writer) error
}

// verbs are padrun's subcommands, in help order; any other first word is a
// command to run.
var verbs []*verb

// shownVerbs are the verbs people use: help, completion and the man page
// list them.
func shownVerbs() []*verb {
	var out []*verb
	for _, v := range verbs {
		if !v.hidden {
			out = append(out, v)
		}
	}
	return out
}

func findVerb(name string) *verb {
	for _, v := range verbs {
		if v.name == name {
			return v
		}
	}
	return nil
}

// flagSet returns the verb's flags, -h/--help included.
func (v *verb) flagSet() (*pflag.FlagSet, func([]string, io.Writer, io.Writer) error, *bool) {
	fs := newFlagSet("padrun " + v.name)
	run := v.setup(fs)
	help := fs.BoolP("help", "h", false, "show this help")
	return fs, run, help
}

// synopsis is the verb's usage line: its flags, then its arguments.
func (v *verb) synopsis() string {
	fs, _, _ := v.flagSet()
	s := "padrun " + v.name
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Name == "help" || etcdDetail(f.Name) {
			return // the etcd flags' details are in the flag list: the line stays short
		}
		s += " [--" + f.Name
		if arg := flagArg(f); arg != "" && f.Name != "etcd" {
			s += " " + arg
		}
		if f.Name == "etcd" {
			s += " ..."
		}
		s += "]"
	})
	if v.args != "" {
		s += " " + v.args
	}
	return s
}

// etcdDetail reports whether a flag is one of --etcd's details.
func etcdDetail(name string) bool {
	return strings.HasPrefix(name, "etcd-") || name == "session-key"
}

// help writes the verb's help.
func (v *verb) help(w io.Writer) {
	fs, _, _ := v.flagSet()
	fmt.Fprintf(w, "usage: %s\n\n%s\n\nflags:\n%s", v.synopsis(), wrap(v.summary, 76), flagUsages(fs))
}

// runVerb parses the verb's flags and arguments and runs it.
func (v *verb) runVerb(args []string, stdout, stderr io.Writer) error {
	fs, run, help := v.flagSet()
	if err := parseFlags(fs, args, true, v.synopsis()); err != nil {
		var usage *wrapper.UsageError
		if errors.As(err, &usage) {
			usage.Err = fmt.Errorf("%s: %w", v.name, usage.Err)
		}
		return err
	}
	if *help {
		v.help(stdout)
		return nil
	}
	n := fs.NArg()
	if n < v.min || (v.max >= 0 && n > v.max) {
		what := "no " + strings.ToLower(v.args) + " given"
		if n > v.min {
			what = fmt.Sprintf("unexpected argument %q", fs.Arg(max(v.max, 0)))
		}
		return &wrapper.UsageError{Err: fmt.Errorf("%s: %s", v.name, what), Advice: v.synopsis()}
	}
	return run(fs.Args(), stdout, stderr)
}

func newFlagSet(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(io.Discard)
	return fs
}

// runFlagSet is the run's flags, for help, completion and the man page.
func runFlagSet() *pflag.FlagSet {
	fs := newFlagSet("padrun")
	new(runFlags).addFlags(fs)
	fs.BoolP("version", "V", false, "print the version and exit")
	fs.BoolP("help", "h", false, "show this help")
	return fs
}

// mainHelp writes padrun's own help.
func mainHelp(w io.Writer) {
	fmt.Fprintln(w, "usage: padrun [flags] [--] COMMAND [ARG...]")
	for _, v := range shownVerbs() {
		fmt.Fprintln(w, "       "+v.synopsis())
	}
	fmt.Fprintf(w, "\n%s\n\nexamples:\n%s", description(), exampleList())
	fmt.Fprintf(w, "\nflags:\n%s\n", flagUsages(runFlagSet()))
	fmt.Fprintln(w, "verbs:")
	for _, v := range shownVerbs() {
		fmt.Fprintf(w, "  %-11s %s\n", v.name, v.short)
	}
	fmt.Fprintln(w, "\nEach verb has --help: padrun VERB --help, or padrun help VERB.")
	fmt.Fprintf(w, "\nenvironment:\n%s", table(envVars()))
	fmt.Fprintf(w, "\nexit status:\n%s", table(exitStatuses))
}

// exampleList is examples for the help: each command, and under it what
// it does.
func exampleList() string {
	var b strings.Builder
	for _, e := range examples {
		fmt.Fprintf(&b, "  %s\n      %s\n", e.name, hang(e.desc, 6))
	}
	return b.String()
}

// table lists name and text pairs, the text aligned and wrapped to 80
// columns.
func table(rows []envVar) string {
	width := 0
	for _, r := range rows {
		width = max(width, len(r.name))
	}
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "  %-*s  %s\n", width, r.name, hang(r.desc, width+4))
	}
	return b.String()
}

// hang wraps text that starts at column indent to 80 columns, later lines
// indented as far.
func hang(text string, indent int) string {
	return strings.ReplaceAll(wrap(text, max(80-indent, 30)), "\n", "\n"+strings.Repeat(" ", indent))
}

// flagArg is the placeholder a flag takes, upper case, or "" for a switch.
func flagArg(f *pflag.Flag) string {
	if f.Value.Type() == "bool" {
		return ""
	}
	name, _ := pflag.UnquoteUsage(f)
	if name == "" || name == "stringArray" || name == "string" {
		name = "VALUE"
	}
	return strings.ToUpper(name)
}

// flagUsages lists flags as "  -h, --help  text": switches without pflag's
// "[=true|false]", placeholders upper case, defaults only when they say
// something.
func flagUsages(fs *pflag.FlagSet) string {
	var rows []envVar
	width := 0
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		left := "      --" + f.Name
		if f.Shorthand != "" {
			left = "  -" + f.Shorthand + ", --" + f.Name
		}
		if arg := flagArg(f); arg != "" {
			left += " " + arg
		}
		rows = append(rows, envVar{left, flagText(f)})
		width = max(width, len(left))
	})
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "%-*s   %s\n", width, r.name, hang(r.desc, width+3))
	}
	return b.String()
}

// flagText is a flag's description, with its default when that says
// something.
func flagText(f *pflag.Flag) string {
	_, text := pflag.UnquoteUsage(f)
	if d := f.DefValue; d != "" && d != "false" && d != "0" && d != "0s" && d != "[]" && !strings.Contains(text, "(default") {
		text += " (default " + d + ")"
	}
	return text
}

// wrap breaks s into lines of at most n characters.
func wrap(s string, n int) string {
	var b strings.Builder
	line := 0
	for _, w := range strings.Fields(s) {
		if line > 0 && line+1+len(w) > n {
			b.WriteByte('\n')
			line = 0
		} else if line > 0 {
			b.WriteByte(' ')
			line++
		}
		b.WriteString(w)
		line += len(w)
	}
	return b.String()
}

// duration is a pflag value that reads a bare number as seconds, as
// flock -w and timeout(1) do, and anything else as a Go duration.
type duration struct{ d *time.Duration }

// bareNumber reports whether s is digits with an optional minus sign and
// fraction: 10, -5, 1.5 or 2.
func bareNumber(s string) bool {
	whole, frac, _ := strings.Cut(strings.TrimPrefix(s, "-"), ".")
	digits := func(s string) bool { return strings.Trim(s, "0123456789") == "" }
	return whole != "" && digits(whole) && digits(frac)
}

func (v duration) Set(s string) error {
	if bareNumber(s) {
		var secs float64
		if _, err := fmt.Sscan(s, &secs); err != nil || math.Abs(secs) > float64(math.MaxInt64)/float64(time.Second) {
			return fmt.Errorf("%q seconds is out of range", s)
		}
		*v.d = time.Duration(secs * float64(time.Second))
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("want seconds or a duration such as 90s, 10m or 1h30m")
	}
	*v.d = d
	return nil
}

func (v duration) String() string {
	if v.d == nil {
		return "0s"
	}
	return v.d.String()
}
func (v duration) Type() string { return "duration" }

// durationVar defines a duration flag that also takes bare seconds.
func durationVar(fs *pflag.FlagSet, p *time.Duration, name string, def time.Duration, usage string) {
	*p = def
	fs.Var(duration{p}, name, usage)
}
