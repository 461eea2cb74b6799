package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/padrun/padrun/marker"
	"github.com/padrun/padrun/marker/ident"
	"github.com/padrun/padrun/registry"
	"github.com/padrun/padrun/wrapper"
	"github.com/padrun/padrun/wrapper/harness"
)

func init() {
	verbs = []*verb{
		{name: "status", args: "FILE...", max: -1, setup: setupStatus,
			short:   "say whether session files are free, and who holds them",
			summary: "Says for each FILE whether it is free, held, stale or unknown, who holds it, and the verdict's reasons. It never takes the lock. A session of a database is named HARNESS:ID (opencode:ses_..., kilo:ses_...) or DB:ID. Exit 0 when every file could be taken now, 75 otherwise."},
		{name: "unlock", args: "FILE...", max: -1, setup: setupUnlock,
			short:   "remove stale markers",
			summary: "Removes the stale marker of each FILE (or HARNESS:ID, DB:ID, as status); never an alive one, an unknown one only with --force. Exit 0 when every file is free afterwards, 75 when a marker was kept, 125 on errors."},
		{name: "ls", max: 0, setup: setupLs,
			short:   "list the registry's sessions",
			summary: "Lists the registry's sessions, pad's and padrun's, newest first; dead ones only with --all. The table fits $COLUMNS, else the terminal's width; piped, nothing is cut."},
		{name: "prune", max: 0, setup: setupPrune,
			short:   "remove dead records",
			summary: "Removes dead records, and unknown ones older than --older-than; never alive ones. Prints pad's summary line. Also removes the empty cgroups that padruns killed by SIGKILL left (one named by an earlier release once a minute old); one that processes of the dead session still live in is kept, and they are named. And the folders of harness entries that they left in the control folder."},
		{name: "doctor", max: 0, setup: setupDoctor,
			short:   "say what this machine's padrun guards",
			summary: "Says what padrun guards here: the registry folder, cgroup delegation, etcd when --etcd or $PADRUN_ETCD names it, and each harness padrun knows that is on PATH, with its release against the tested ones, whether its companion loads here (checked as a run checks it) and how each of its modes is guarded (docs/harnesses.md). Exit 0 when everything found is guarded, 1 when something is not, 125 on errors."},
		{name: "version", max: 0, setup: setupVersion,
			short:   "print the version and the harness releases tested",
			summary: "Prints padrun's version, commit and Go version, and the releases of each harness padrun is tested with: the oldest it supports and the newest."},
		{name: "help", args: "[VERB]", max: 1, setup: setupHelp,
			short:   "print this help, or a verb's",
			summary: "Prints padrun's help, or VERB's."},
		{name: "completion", args: "SHELL", min: 1, max: 1, setup: setupCompletion,
			short:   "print a completion script for bash, zsh or fish",
			summary: "Prints a completion script for SHELL: bash, zsh or fish. Load it with: source <(padrun completion bash), padrun completion fish | source, or in ~/.zshrc: source <(padrun completion zsh)."},
		// companion is run by a harness's companion, not by people: its
		// hooks run `padrun companion SIDE`, each side an adapter's
		// (harness.HookSides).
		{name: "companion", args: companionArgs(), min: 1, max: 1 + companionMaxArgs(), hidden: true, setup: setupCompanion,
			summary: "Runs a companion's side inside the harness, run by the harness's hooks with the hook's JSON on stdin: padrun companion " + companionSides("or") + "."},
	}
}

func setupCompanion(*pflag.FlagSet) func([]string, io.Writer, io.Writer) error {
	return func(args []string, stdout, stderr io.Writer) error {
		side, rest, ok := harness.FindHook(args)
		if !ok {
			return &wrapper.UsageError{Err: fmt.Errorf("companion: unknown side %q", strings.Join(args, " ")),
				Advice: "padrun companion " + companionSides("or") + " (run by the harness's hooks, reading the hook's JSON on stdin)"}
		}
		call := harness.HookCall{Stdin: os.Stdin, Stdout: stdout, Stderr: stderr, Control: wrapper.ReadEnv().ControlClient()}
		if code := side.Run(rest, call); code != 0 {
			return exitStatus(code) // the harness reads the hook's status: 2 blocks
		}
		return nil
	}
}

// companionSides names the sides `padrun companion` runs, as their hooks
// run them: "claude-hook, gemini-hook EVENT or qwen-hook".
func companionSides(and string) string {
	var sides []string
	for _, h := range harness.HookSides() {
		sides = append(sides, h.Usage())
	}
	return harness.List(sides, and)
}

// companionMaxArgs is the most words a hook gives after its side.
func companionMaxArgs() int {
	n := 0
	for _, h := range harness.HookSides() {
		n = max(n, len(h.Args))
	}
	return n
}

// companionArgs is the companion verb's synopsis: "claude-hook|gemini-hook EVENT".
func companionArgs() string {
	var sides []string
	for _, h := range harness.HookSides() {
		sides = append(sides, h.Usage())
	}
	return strings.Join(sides, "|")
}

func setupStatus(fs *pflag.FlagSet) func([]string, io.Writer, io.Writer) error {
	asJSON := fs.Bool("json", false, "print JSON")
	var ef etcdFlags
	ef.addVerbFlags(fs)
	return func(args []string, stdout, _ io.Writer) error {
		files, err := fileArgs("status", args)
		if err != nil {
			return err
		}
		if c, err := ef.client(); c != nil || err != nil {
			return etcdStatusAll(c, &ef, files, *asJSON, stdout, err)
		}
		self, now := ident.ReadSelf(), time.Now()
		all := make([]marker.Status, 0, len(files))
		var free error
		for _, f := range files {
			st := wrapper.Status(f, self, now)
			all = append(all, st)
			if !st.Free() {
				free = exitStatus(exitRefused)
			}
		}
		if *asJSON {
			writeJSON(stdout, all)
			return free
		}
		for _, st := range all {
			printStatus(stdout, st, now)
		}
		return free
	}
}

func printStatus(w io.Writer, st marker.Status, now time.Time) {
	w = newShownWriter(w)
	if dir := missingFolder(st.File); st.State == marker.Free && dir != "" {
		fmt.Fprintf(w, "%s: %s (no such folder: %s; a typo?)\n", st.File, st.State, dir)
	} else {
		fmt.Fprintf(w, "%s: %s\n", st.File, st.State)
	}
	if st.Holder != nil {
		host, _ := os.Hostname() // Best effort: the holder's host is then always named.
		fmt.Fprintf(w, "  holder: %s\n", wording{now: now, host: host}.holderLine(st.Holder))
	}
	if st.Reason != "" {
		fmt.Fprintf(w, "  verdict: %s: %s\n", st.Verdict, st.Reason)
	}
	if st.LocalFlock != "" {
		fmt.Fprintf(w, "  filesystem: %s, whose flock does not reach other machines: their holders are judged by the marker\n", st.LocalFlock)
	}
}

// missingFolder is the folder of a session file that does not exist, or
// "": a free file there is more likely a typo than a session. A session of
// a database is named in padrun's guard folder, made at its first hold:
// the database's folder is what must exist.
func missingFolder(file string) string {
	dir := filepath.Dir(file)
	if strings.HasSuffix(dir, ".padrun") {
		dir = filepath.Dir(dir)
	}
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return dir
	}
	return ""
}

func setupUnlock(fs *pflag.FlagSet) func([]string, io.Writer, io.Writer) error {
	force := fs.Bool("force", false, "also remove a marker whose holder cannot be judged")
	var ef etcdFlags
	ef.addVerbFlags(fs)
	return func(args []string, stdout, stderr io.Writer) error {
		if c, err := ef.client(); c != nil || err != nil {
			return etcdUnlockAll(c, &ef, args, *force, stdout, stderr, err)
		}
		return unlock(args, *force, stdout, stderr)
	}
}

func unlock(args []string, force bool, stdout, stderr io.Writer) error {
	files, err := fileArgs("unlock", args)
	if err != nil {
		return err
	}
	self := ident.ReadSelf()
	code := 0
	stdout = newShownWriter(stdout)
	for _, f := range files {
		before := marker.Inspect(f, self, time.Now())
		st, err := marker.Unlock(f, self, force)
		if err != nil {
			fmt.Fprintf(stderr, "padrun: unlock %s: %v\n", f, err)
			code = exitFailed
			continue
		}
		switch {
		case st.State == marker.Free && before.State != marker.Free:
			fmt.Fprintf(stdout, "%s: unlocked (was %s: %s)\n", f, before.State, before.Reason)
		case st.State == marker.Free:
			fmt.Fprintf(stdout, "%s: free\n", f)
		default:
			fmt.Fprintf(stderr, "padrun: kept the marker of %s: %s: %s\n", f, st.State, st.Reason)
			if st.State == marker.Unknown {
				fmt.Fprintf(stderr, "padrun: hint: if no session uses it: padrun unlock --force %s\n", f)
			}
			if code == 0 {
				code = exitRefused
			}
		}
	}
	if code != 0 {
		return exitStatus(code)
	}
	return nil
}

// sessionArgs names a session of a database (opencode:ID, kilo:ID,
// DB:ID) by its guard beside the database, and leaves other paths alone.
func sessionArgs(args []string) []string {
	home, _ := os.UserHomeDir() // Best effort: then HARNESS:ID names no database.
	wd, _ := os.Getwd()         // Best effort: then CanonicalFile says why.
	env := harness.Env{Getenv: os.Getenv, Home: home, Cwd: wd}
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a
		if g, ok := harness.SessionArg(a, env); ok {
			out[i] = g
		}
	}
	return out
}

// fileArgs makes the verb's file arguments canonical like the run's.
func fileArgs(verb string, args []string) ([]string, error) {
	if len(args) == 0 {
		return nil, &wrapper.UsageError{Err: fmt.Errorf("%s: no file given", verb), Advice: "padrun " + verb + " FILE..."}
	}
	files := make([]string, 0, len(args))
	for _, a := range sessionArgs(args) {
		f, err := wrapper.CanonicalFile(a)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", verb, err)
		}
		files = append(files, f)
	}
	return files, nil
}

func openRegistry(stderr io.Writer) (*registry.Registry, error) {
	dir, err := registry.Dir()
	if err != nil {
		return nil, err
	}
	r, err := registry.Open(dir)
	if err != nil {
		return nil, err
	}
	r.OnWait = func(holder string) {
		fmt.Fprintf(stderr, "padrun: waiting for the registry's lock, held by %s (at most %s)\n", dash(holder), registry.LockWait)
	}
	return r, nil
}

// printError reports err, with its hint when it has one.
func printError(stderr io.Writer, err error) {
	fmt.Fprintf(stderr, "padrun: %v\n", err)
	var h interface{ Hint() string }
	if errors.As(err, &h) && h.Hint() != "" {
		fmt.Fprintf(stderr, "padrun: hint: %s\n", h.Hint())
	}
}

func setupLs(fs *pflag.FlagSet) func([]string, io.Writer, io.Writer) error {
	all := fs.Bool("all", false, "also list dead sessions")
	asJSON := fs.Bool("json", false, "print JSON")
	agent := fs.String("agent", "", "only sessions of agent `NAME`")
	cwd := fs.String("cwd", "", "only sessions started in folder `DIR`")
	var ef etcdFlags
	ef.addVerbFlags(fs)
	return func(_ []string, stdout, stderr io.Writer) error {
		if c, err := ef.client(); c != nil || err != nil {
			if err != nil {
				return err
			}
			return etcdLs(c, *asJSON, stdout)
		}
		return ls(*all, *asJSON, *agent, *cwd, stdout, stderr)
	}
}

func ls(all, asJSON bool, agent, cwd string, stdout, stderr io.Writer) error {
	reg, err := openRegistry(stderr)
	if err != nil {
		return err
	}
	entries, err := reg.List()
	if err != nil {
		return err
	}
	rows := registry.Select(entries, registry.Filter{All: all, Agent: agent, Cwd: cwd})
	if asJSON {
		return registry.WriteRows(stdout, rows)
	}
	printTable(stdout, rows, time.Now(), tableWidth(stdout))
	return nil
}

func pidOf(e registry.Entry) string {
	if e.Malformed {
		return filepath.Base(e.Path)
	}
	pid, _ := e.Owner()
	return fmt.Sprint(pid)
}

func harnessOf(e registry.Entry) string {
	switch {
	case e.Padrun != nil && e.Padrun.Harness != "":
		return e.Padrun.Harness
	case e.Malformed:
		return "(malformed)"
	case e.Legacy:
		return "(pad v1)"
	}
	return "-"
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func setupPrune(fs *pflag.FlagSet) func([]string, io.Writer, io.Writer) error {
	var olderThan time.Duration
	durationVar(fs, &olderThan, "older-than", 0, "also prune unknown records older than `DURATION` (a bare number is seconds)")
	asJSON := fs.Bool("json", false, "print JSON")
	return func(_ []string, stdout, stderr io.Writer) error { return prune(olderThan, *asJSON, stdout, stderr) }
}

func prune(olderThan time.Duration, asJSON bool, stdout, stderr io.Writer) error {
	reg, err := openRegistry(stderr)
	if err != nil {
		return err
	}
	res, err := reg.Prune(context.Background(), olderThan, time.Now())
	if err != nil {
		return err
	}
	// The records are pruned by now: a cgroup folder that cannot be read
	// is said, and pad's line still printed.
	cgroups, err := wrapper.PruneCgroups(time.Now())
	if err != nil {
		fmt.Fprintf(stderr, "padrun: %v\n", err)
	}
	wrapper.PruneShims(wrapper.ReadEnv()) // Best effort: folders of harness entries that dead padruns left
	if asJSON {
		writeJSON(stdout, struct {
			registry.PruneResult
			wrapper.PrunedCgroups
		}{res, cgroups})
		return nil
	}
	// pad's exact wording, capital and final period included: scripts that
	// run pad's prune match this line.
	msg := fmt.Sprintf("Pruned %d dead", res.Dead)
	if olderThan > 0 {
		msg += fmt.Sprintf(" and %d unknown older than %s", res.Unknown, olderThan)
	}
	fmt.Fprintf(stdout, "%s; kept %d.\n", msg, res.Kept)
	switch cgroups.Removed {
	case 0:
	case 1:
		fmt.Fprintln(stdout, "Removed 1 empty cgroup of a dead padrun.")
	default:
		fmt.Fprintf(stdout, "Removed %d empty cgroups of dead padruns.\n", cgroups.Removed)
	}
	for _, k := range cgroups.Kept {
		fmt.Fprintf(stderr, "padrun: kept cgroup %s\n", k)
	}
	return nil
}

func setupVersion(*pflag.FlagSet) func([]string, io.Writer, io.Writer) error {
	return func(_ []string, stdout, _ io.Writer) error {
		fmt.Fprint(stdout, versionText())
		return nil
	}
}

func setupHelp(*pflag.FlagSet) func([]string, io.Writer, io.Writer) error {
	return func(args []string, stdout, _ io.Writer) error {
		if len(args) == 0 {
			mainHelp(stdout)
			return nil
		}
		v := findVerb(args[0])
		if v == nil {
			return &wrapper.UsageError{Err: fmt.Errorf("help: no verb %q", args[0]), Advice: "the verbs are " + verbNames()}
		}
		v.help(stdout)
		return nil
	}
}

func verbNames() string {
	names := make([]string, len(shownVerbs()))
	for i, v := range shownVerbs() {
		names[i] = v.name
	}
	return strings.Join(names, ", ")
}

func writeJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v) // Best effort: stdout is the reader's.
}
