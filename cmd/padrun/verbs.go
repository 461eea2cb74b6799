package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/padrun/padrun/marker"
	"github.com/padrun/padrun/marker/ident"
	"github.com/padrun/padrun/registry"
	"github.com/padrun/padrun/wrapper"
)

// verbs are padrun's subcommands; anything else is a command to run.
var verbs = map[string]func(args []string, stdout, stderr io.Writer) int{
	"status":  cmdStatus,
	"unlock":  cmdUnlock,
	"ls":      cmdLs,
	"prune":   cmdPrune,
	"version": cmdVersion,
	"help":    cmdHelp,
	// companion is run by a harness's companion, not by people: claude's
	// hooks run `padrun companion claude-hook`.
	"companion": cmdCompanion,
}

// cmdCompanion runs a companion's side inside the harness.
func cmdCompanion(args []string, _, stderr io.Writer) int {
	if len(args) != 1 || args[0] != "claude-hook" {
		fmt.Fprintln(stderr, "padrun: usage: padrun companion claude-hook (run by claude's hooks, reading the hook's JSON on stdin)")
		return exitFailed
	}
	return wrapper.ClaudeHook(os.Stdin, stderr)
}

// parseVerb parses a verb's flags; a nil return means exit with status.
func parseVerb(name, synopsis string, args []string, stdout, stderr io.Writer, add func(*pflag.FlagSet)) (*pflag.FlagSet, int, bool) {
	fs := pflag.NewFlagSet("padrun "+name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	add(fs)
	help := fs.BoolP("help", "h", false, "show this help")
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(stderr, "padrun: %s: %v\npadrun: hint: %s\n", name, err, synopsis)
		return nil, exitFailed, false
	}
	if *help {
		fmt.Fprintf(stdout, "usage: %s\n\nflags:\n%s", synopsis, fs.FlagUsages())
		return nil, 0, false
	}
	return fs, 0, true
}

func cmdStatus(args []string, stdout, stderr io.Writer) int {
	var asJSON bool
	fs, code, ok := parseVerb("status", "padrun status [--json] FILE...", args, stdout, stderr, func(fs *pflag.FlagSet) {
		fs.BoolVar(&asJSON, "json", false, "print JSON")
	})
	if !ok {
		return code
	}
	files, code := fileArgs("status", fs.Args(), stderr)
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
	if asJSON {
		writeJSON(stdout, all)
		return code
	}
	for _, st := range all {
		printStatus(stdout, st, now)
	}
	return code
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

func cmdUnlock(args []string, stdout, stderr io.Writer) int {
	var force bool
	fs, code, ok := parseVerb("unlock", "padrun unlock [--force] FILE...", args, stdout, stderr, func(fs *pflag.FlagSet) {
		fs.BoolVar(&force, "force", false, "also remove a marker whose holder cannot be judged")
	})
	if !ok {
		return code
	}
	files, code := fileArgs("unlock", fs.Args(), stderr)
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

func cmdLs(args []string, stdout, stderr io.Writer) int {
	var all, asJSON bool
	var agent, cwd string
	_, code, ok := parseVerb("ls", "padrun ls [--all] [--json] [--agent NAME] [--cwd DIR]", args, stdout, stderr, func(fs *pflag.FlagSet) {
		fs.BoolVar(&all, "all", false, "also list dead sessions")
		fs.BoolVar(&asJSON, "json", false, "print JSON")
		fs.StringVar(&agent, "agent", "", "only sessions of agent `NAME`")
		fs.StringVar(&cwd, "cwd", "", "only sessions started in folder `DIR`")
	})
	if !ok {
		return code
	}
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
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "AGENT\tPID\tSTATE\tHARNESS\tSESSION\tCWD\tSTARTED")
	for _, e := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", dash(e.Agent), pidOf(e), e.Liveness, harnessOf(e),
			dash(sessionOf(e)), dash(e.Cwd), e.Time.Local().Format("2006-01-02 15:04:05"))
	}
	tw.Flush()
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

func sessionOf(e registry.Entry) string {
	if e.SessionID != "" {
		return e.SessionID
	}
	if e.Padrun != nil && len(e.Padrun.SessionFiles) > 0 {
		return e.Padrun.SessionFiles[0]
	}
	return ""
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func cmdPrune(args []string, stdout, stderr io.Writer) int {
	var olderThan time.Duration
	var asJSON bool
	_, code, ok := parseVerb("prune", "padrun prune [--older-than DURATION] [--json]", args, stdout, stderr, func(fs *pflag.FlagSet) {
		fs.DurationVar(&olderThan, "older-than", 0, "also prune unknown records older than `DURATION`")
		fs.BoolVar(&asJSON, "json", false, "print JSON")
	})
	if !ok {
		return code
	}
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

func cmdVersion(args []string, stdout, stderr io.Writer) int {
	if _, code, ok := parseVerb("version", "padrun version", args, stdout, stderr, func(*pflag.FlagSet) {}); !ok {
		return code
	}
	fmt.Fprintln(stdout, "padrun "+wrapper.Version)
	return 0
}

func cmdHelp(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("padrun", pflag.ContinueOnError)
	new(runFlags).addFlags(fs)
	fs.BoolP("help", "h", false, "show this help")
	fmt.Fprint(stdout, usage+fs.FlagUsages())
	return 0
}

func writeJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v) // Best effort: stdout is the reader's.
}
