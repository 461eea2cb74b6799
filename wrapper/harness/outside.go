package harness

import (
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Writers padrun did not start (docs/spec.md §5 rule 9): a harness run
// without padrun writes a session as a wrapped one does. padrun finds them
// by what the harness itself leaves (an adapter's Records, or its InUse
// locks) and else by the live processes of the harness, whose command line,
// folder and environment the adapter's own read resolves to their session.

// LiveRecord is a record a harness leaves of a session it has open (claude's
// sessions/<pid>.json): the process that writes it, and how to check that
// process is still the one that wrote it.
type LiveRecord struct {
	Harness string
	Pid     int
	// ProcStart is the writer's start token as the harness recorded it
	// (claude: /proc/PID/stat's starttime); PidDomain the boot and pid
	// namespace it is counted in (claude: "linux:<boot id>:pid:[<inode>]").
	ProcStart, PidDomain string
	Path                 string    // the record
	Since                time.Time // when the writer started, as recorded
}

// LiveRecords lists the records of live sessions that file's harness keeps
// of file; none when its harness keeps none.
func LiveRecords(file string) []LiveRecord {
	var out []LiveRecord
	for _, a := range adapters {
		if a.Records == nil {
			continue
		}
		for _, r := range a.Records(file) {
			r.Harness = a.Name
			out = append(out, r)
		}
	}
	return out
}

// Outside is what a live process of a harness, one padrun did not start,
// writes, read from its command line, folder and environment.
type Outside struct {
	Harness string
	Command string   // its command's base name (the script's, behind an interpreter)
	Files   []string // the sessions it writes, absolute, as the adapter reads them
	// Folders, when its harness erased its command line (pi's
	// process.title): the session folders it works in; which file of them
	// it writes cannot be told.
	Folders []string
}

// MayBeHarness reports, cheaply, whether a process whose argv[0] is argv0
// may be a harness's: a harness's own name, or an interpreter.
func MayBeHarness(argv0 string) bool {
	base := filepath.Base(argv0)
	if slices.Contains(launchers, base) {
		return true
	}
	a, ok := Lookup(base)
	return ok && a.Name != None
}

// MayBeHarnessExe reports, cheaply, whether a process running the
// executable at path may be a harness's: an interpreter, or a path that
// names a harness (npm's .../claude-code/bin/claude.exe, claude's own
// installer's .../claude/versions/2.1.332, codex's vendor binary). A
// harness's binary copied to a name without its own is not seen.
func MayBeHarnessExe(path string) bool {
	path = strings.TrimSuffix(path, " (deleted)")
	if MayBeHarness(path) {
		return true
	}
	for _, a := range adapters {
		if len(a.Name) >= 4 && strings.Contains(path, a.Name) {
			return true
		}
	}
	return false
}

// ReadOutside reads argv, a live process's command line, as its harness's:
// ok is false when it is no harness padrun looks for (none, or one whose own
// locks say what it has open: copilot). env is the process's: its folder,
// environment and home.
func ReadOutside(argv []string, env Env) (o Outside, ok bool) {
	a, launcher, args, ok := identify(argv)
	if !ok || a.InUse != nil {
		return Outside{}, false
	}
	if env.Getenv == nil {
		env.Getenv = func(string) string { return "" }
	}
	if env.Now.IsZero() {
		env.Now = time.Now()
	}
	env.NoPin, env.NoCompanion = true, true
	o = Outside{Harness: a.Name, Command: filepath.Base(args[0])}
	if a.ErasesArgv && erased(args) {
		for _, w := range a.read([]string{args[0]}, env).Watch {
			o.Folders = append(o.Folders, w.Dir)
		}
		return o, true
	}
	if env.Version == "" {
		cmd := args[0]
		if launcher != nil {
			cmd = abs(cmd, env)
		}
		env.Version = installedVersion(cmd, env, a.Packages)
	}
	p := a.read(slices.Clone(args), env)
	if p.Err == nil {
		o.Files = p.Files
	}
	return o, true
}

// Identify names the harness of a process's command line that padrun
// looks for (see ReadOutside), without reading anything else.
func Identify(argv []string) (string, bool) {
	a, _, _, ok := identify(argv)
	return a.Name, ok && a.InUse == nil
}

// identify finds the harness of a process's argv: argv[0]'s base name, or,
// behind an interpreter, the script's (its extension left out) or the npm
// package it is in. launcher and args are as SplitLauncher's.
func identify(argv []string) (a Adapter, launcher, args []string, ok bool) {
	if len(argv) == 0 {
		return Adapter{}, nil, nil, false
	}
	if a, ok := Lookup(filepath.Base(argv[0])); ok && a.Name != None {
		return a, nil, argv, true
	}
	launcher, args, err := SplitLauncher("", argv)
	if err != nil || launcher == nil {
		return Adapter{}, nil, nil, false
	}
	script := args[0]
	name := strings.TrimSuffix(filepath.Base(script), filepath.Ext(script))
	if a, ok := Lookup(name); ok && a.Name != None {
		return a, launcher, args, true
	}
	for _, a := range adapters {
		for _, pkg := range a.Packages {
			if strings.Contains(filepath.ToSlash(script), "/node_modules/"+pkg+"/") {
				return a, launcher, args, true
			}
		}
	}
	return Adapter{}, nil, nil, false
}

// erased reports whether a command line was overwritten by its process's
// title: only the title is left, and empty strings where the arguments were.
func erased(args []string) bool {
	if len(args) < 2 {
		return false
	}
	for _, a := range args[1:] {
		if a != "" {
			return false
		}
	}
	return true
}
