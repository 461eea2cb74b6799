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
)

func init() {
	verbs = []*verb{
		{name: "status", args: "FILE...", max: -1, setup: setupStatus,
			short:   "say whether session files are free, and who holds them",
			summary: "Says for each FILE whether it is free, held, stale or unknown, who holds it, and the verdict's reasons. It never takes the lock. Exit 0 when every file could be taken now, 75 otherwise."},
		{name: "unlock", args: "FILE...", max: -1, setup: setupUnlock,
			short:   "remove stale markers",
			summary: "Removes the stale marker of each FILE; never an alive one, an unknown one only with --force. Exit 0 when every file is free afterwards, 75 when a marker was kept, 125 on errors."},
		{name: "ls", max: 0, setup: setupLs,
			short:   "list the registry's sessions",
			summary: "Lists the registry's sessions, pad's and padrun's, newest first; dead ones only with --all. The table fits $COLUMNS, else the terminal's width; piped, nothing is cut."},
		{name: "prune", max: 0, setup: setupPrune,
			short:   "remove dead records",
			summary: "Removes dead records, and unknown ones older than --older-than; never alive ones. Prints pad's summary line."},
		{name: "version", max: 0, setup: setupVersion,
			short:   "print the version, commit and Go version",
			summary: "Prints padrun's version, commit and Go version."},
		{name: "help", args: "[VERB]", max: 1, setup: setupHelp,
			short:   "print this help, or a verb's",
			summary: "Prints padrun's help, or VERB's."},
		{name: "completion", args: "SHELL", min: 1, max: 1, setup: setupCompletion,
			short:   "print a completion script for bash, zsh or fish",
			summary: "Prints a completion script for SHELL: bash, zsh or fish. Load it with: source <(padrun completion bash), padrun completion fish | source, or in ~/.zshrc: source <(padrun completion zsh)."},
		// companion is run by a harness's companion, not by people: claude's
		// hooks run `padrun companion claude-hook`.
		{name: "companion", args: "claude-hook", min: 1, max: 1, hidden: true, setup: setupCompanion,
			summary: "Runs a companion's side inside the harness: claude's hooks run padrun companion claude-hook, with the hook's JSON on stdin."},
	}
}

func setupCompanion(*pflag.FlagSet) func([]string, io.Writer, io.Writer) int {
	return func(args []string, _, stderr io.Writer) int {
		if args[0] != "claude-hook" {
			fmt.Fprintln(stderr, "padrun: usage: padrun companion claude-hook (run by claude's hooks, reading the hook's JSON on stdin)")
			return exitFailed
		}
		return wrapper.ClaudeHook(os.Stdin, stderr)
	}
}

func setupStatus(fs *pflag.FlagSet) func([]string, io.Writer, io.Writer) int {
	asJSON := fs.Bool("json", false, "print JSON")
	return func(args []string, stdout, stderr io.Writer) int {
		files, code := fileArgs("status", args, stderr)
		if files == nil {
			return code
		}
		self, now := ident.ReadSelf(), time.Now()
		all := make([]marker.Status, 0, len(files))
		code = 0
		for _, f := range files {
			st := marker.Inspect(f, self, now)
			all = append(all, st)
			if !st.Free() {
				code = exitRefused
			}
		}
		if *asJSON {
			writeJSON(stdout, all)
			return code
		}
		for _, st := range all {
			printStatus(stdout, st, now)
		}
		return code
	}
}

func printStatus(w io.Writer, st marker.Status, now time.Time) {
	fmt.Fprintf(w, "%s: %s\n", st.File, st.State)
	if st.Holder != nil {
		fmt.Fprintf(w, "  holder: %s\n", wrapper.HolderLine(st.Holder, now))
	}
	if st.Reason != "" {
		v := st.Verdict
		if v == "" {
			v = "unknown"
		}
		fmt.Fprintf(w, "  verdict: %s: %s\n", v, st.Reason)
	}
	if st.LocalFlock != "" {
		fmt.Fprintf(w, "  filesystem: %s, whose flock does not reach other machines: their holders are judged by the marker\n", st.LocalFlock)
	}
}

func setupUnlock(fs *pflag.FlagSet) func([]string, io.Writer, io.Writer) int {
	force := fs.Bool("force", false, "also remove a marker whose holder cannot be judged")
	return func(args []string, stdout, stderr io.Writer) int { return unlock(args, *force, stdout, stderr) }
}

func unlock(args []string, force bool, stdout, stderr io.Writer) int {
	files, code := fileArgs("unlock", args, stderr)
	if files == nil {
		return code
	}
	self := ident.ReadSelf()
	code = 0
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
	return code
}

// fileArgs makes the verb's file arguments canonical like the run's.
func fileArgs(verb string, args []string, stderr io.Writer) ([]string, int) {
	if len(args) == 0 {
		fmt.Fprintf(stderr, "padrun: %s: no file given\npadrun: hint: padrun %s FILE...\n", verb, verb)
		return nil, exitFailed
	}
	files := make([]string, 0, len(args))
	for _, a := range args {
		f, err := wrapper.CanonicalFile(a)
		if err != nil {
			fmt.Fprintf(stderr, "padrun: %s: %v\n", verb, err)
			return nil, exitFailed
		}
		files = append(files, f)
	}
	return files, 0
}

func openRegistry(stderr io.Writer) (*registry.Registry, bool) {
	dir, err := registry.Dir()
	if err == nil {
		var r *registry.Registry
		if r, err = registry.Open(dir); err == nil {
			r.OnWait = func(holder string) {
				fmt.Fprintf(stderr, "padrun: waiting for the registry's lock, held by %s (at most %s)\n", dash(holder), registry.LockWait)
			}
			return r, true
		}
	}
	printError(stderr, err)
	return nil, false
}

// printError reports err, with its hint when it has one.
func printError(stderr io.Writer, err error) {
	fmt.Fprintf(stderr, "padrun: %v\n", err)
	var h interface{ Hint() string }
	if errors.As(err, &h) {
		fmt.Fprintf(stderr, "padrun: hint: %s\n", h.Hint())
	}
}

func setupLs(fs *pflag.FlagSet) func([]string, io.Writer, io.Writer) int {
	all := fs.Bool("all", false, "also list dead sessions")
	asJSON := fs.Bool("json", false, "print JSON")
	agent := fs.String("agent", "", "only sessions of agent `NAME`")
	cwd := fs.String("cwd", "", "only sessions started in folder `DIR`")
	return func(_ []string, stdout, stderr io.Writer) int { return ls(*all, *asJSON, *agent, *cwd, stdout, stderr) }
}

func ls(all, asJSON bool, agent, cwd string, stdout, stderr io.Writer) int {
	reg, ok := openRegistry(stderr)
	if !ok {
		return exitFailed
	}
	entries, err := reg.List()
	if err != nil {
		printError(stderr, err)
		return exitFailed
	}
	rows := registry.Select(entries, registry.Filter{All: all, Agent: agent, Cwd: cwd})
	if asJSON {
		if err := registry.WriteRows(stdout, rows); err != nil {
			printError(stderr, err)
			return exitFailed
		}
		return 0
	}
	printTable(stdout, rows, time.Now(), tableWidth(stdout))
	return 0
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

func setupPrune(fs *pflag.FlagSet) func([]string, io.Writer, io.Writer) int {
	var olderThan time.Duration
	durationVar(fs, &olderThan, "older-than", 0, "also prune unknown records older than `DURATION` (a bare number is seconds)")
	asJSON := fs.Bool("json", false, "print JSON")
	return func(_ []string, stdout, stderr io.Writer) int { return prune(olderThan, *asJSON, stdout, stderr) }
}

func prune(olderThan time.Duration, asJSON bool, stdout, stderr io.Writer) int {
	reg, ok := openRegistry(stderr)
	if !ok {
		return exitFailed
	}
	res, err := reg.Prune(context.Background(), olderThan, time.Now())
	if err != nil {
		printError(stderr, err)
		return exitFailed
	}
	if asJSON {
		writeJSON(stdout, res)
		return 0
	}
	// pad's exact wording, capital and final period included: scripts that
	// run pad's prune match this line.
	msg := fmt.Sprintf("Pruned %d dead", res.Dead)
	if olderThan > 0 {
		msg += fmt.Sprintf(" and %d unknown older than %s", res.Unknown, olderThan)
	}
	fmt.Fprintf(stdout, "%s; kept %d.\n", msg, res.Kept)
	return 0
}

func setupVersion(*pflag.FlagSet) func([]string, io.Writer, io.Writer) int {
	return func(_ []string, stdout, _ io.Writer) int {
		fmt.Fprintln(stdout, versionLine())
		return 0
	}
}

func setupHelp(*pflag.FlagSet) func([]string, io.Writer, io.Writer) int {
	return func(args []string, stdout, stderr io.Writer) int {
		if len(args) == 0 {
			mainHelp(stdout)
			return 0
		}
		v := findVerb(args[0])
		if v == nil {
			fmt.Fprintf(stderr, "padrun: help: no verb %q\npadrun: hint: the verbs are %s\n", args[0], verbNames())
			return exitFailed
		}
		v.help(stdout)
		return 0
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
