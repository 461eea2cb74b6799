package harness

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// droid's options by how commander takes their values (Factory droid
// 0.225.2 and 0.215.0, the bun-compiled binary of @factory/cli-linux-x64:
// the root's options L, the resume command and the exec command): one value,
// an optional value (taken unless the next word is a flag), or a flag.
var (
	droidValue = words{
		"--settings", "--append-system-prompt", "--append-system-prompt-file", "--fork",
		"--cwd", "--worktree-dir", "--auto",
	}
	droidExecValue = words{
		"-o", "--output-format", "--input-format", "-f", "--file", "-s",
		"--session-id", "-m", "--model", "-r", "--reasoning-effort",
		"--spec-model", "--spec-reasoning-effort", "--only-tools", "--add-tools",
		"--remove-tools", "--tag", "--log-group-id", "--worker-model",
		"--worker-reasoning-effort", "--validator-model", "--validator-reasoning-effort",
	}
	droidOptional = words{"-r", "--resume", "-w", "--worktree"}
	// droidCommands are droid's commands that open no session of their
	// own; tui, resume and exec do.
	droidCommands = words{
		"daemon", "search", "find", "update", "mcp", "plugin", "computer",
		"doctor", "help", "wiki-read", "wiki-search", "wiki-upload", "rules",
		"statusline-probe", "software-factory", "record-triage-input",
	}
)

// droidID reports whether id is what padrun takes for a session id
// (^[A-Za-z0-9][A-Za-z0-9._-]*$): droid joins it into a path as given.
func droidID(id string) bool {
	for i := range len(id) {
		c := id[i]
		alnum := '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if !alnum && (i == 0 || c != '.' && c != '_' && c != '-') {
			return false
		}
	}
	return id != ""
}

type droidArgs struct {
	cmd                 string // "" (the TUI), "tui", "resume" or "exec"
	cmdAt               int    // argv index of cmd; 0 without one
	info, worktree      bool
	settings            bool // --settings given: padrun's hooks cannot be added
	resume, last        bool // -r/--resume or the resume command; --last
	forkPick            bool // resume --fork: the pick is forked, only read
	resumeID, sessionID string
	fork, cwd           string // --fork ID, --cwd DIR
	outputFormat, input string
}

func parseDroid(argv []string) droidArgs {
	a := droidArgs{}
	for i := 1; i < len(argv); i++ {
		arg := argv[i]
		if arg == "--" {
			break
		}
		name, value, hasValue := arg, "", false
		if strings.HasPrefix(arg, "--") {
			name, value, hasValue = strings.Cut(arg, "=")
		} else if len(arg) > 2 && arg[0] == '-' && arg[1] != '-' {
			name, value, hasValue = arg[:2], arg[2:], true // commander's -sID
		}
		takeValue := func() {
			if !hasValue && i+1 < len(argv) {
				i++
				value = argv[i]
			}
		}
		switch {
		case name == "-h" || name == "--help" || (name == "-v" || name == "--version") && a.cmd != "exec":
			a.info = true
		case name == "--last":
			a.last = true
		case name == "--fork" && a.cmd == "resume":
			a.forkPick = true
		case droidValue.has(name) || a.cmd == "exec" && droidExecValue.has(name):
			takeValue()
			switch name {
			case "--settings":
				a.settings = true
			case "--fork":
				a.fork = value
			case "--cwd":
				a.cwd = value
			case "-s", "--session-id":
				a.sessionID = value
			case "-o", "--output-format":
				a.outputFormat = value
			case "--input-format":
				a.input = value
			}
		case droidOptional.has(name):
			if !hasValue && i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "-") {
				i++
				value, hasValue = argv[i], true
			}
			if name == "-w" || name == "--worktree" {
				a.worktree = true
			} else {
				a.resume, a.resumeID = true, value
			}
		case strings.HasPrefix(arg, "-"):
		case a.cmd == "" && a.cmdAt == 0 && (arg == "tui" || arg == "resume" || arg == "exec"):
			a.cmd, a.cmdAt = arg, i
			a.resume = a.resume || arg == "resume"
		case a.cmd == "" && a.cmdAt == 0 && droidCommands.has(arg):
			a.info = true
			return a
		case a.cmd == "resume" && a.resumeID == "":
			a.resumeID = arg
		default:
			a.cmdAt = max(a.cmdAt, -1) // a prompt: no command may follow
		}
	}
	return a
}

// mode is the run's mode, as padrun records it.
func (a droidArgs) mode() string {
	switch {
	case a.cmd != "exec":
		return ModeInteractive
	case a.input == "stream-json" || a.input == "stream-jsonrpc":
		return ModeRPC
	case a.outputFormat == "json" || a.outputFormat == "stream-json":
		return ModeJSON
	}
	return ModePrint
}

// droidProjectDir is droid's folder name for a working folder (vi in
// 0.225.2): "-" and the real path without its leading and trailing
// slashes, each run of slashes a dash.
func droidProjectDir(dir string) string {
	dir = strings.TrimLeft(strings.TrimRight(dir, `\/`), "/")
	var b strings.Builder
	b.WriteByte('-')
	for i := range len(dir) {
		if dir[i] != '/' {
			b.WriteByte(dir[i])
		} else if i == 0 || dir[i-1] != '/' {
			b.WriteByte('-')
		}
	}
	return b.String()
}

// droid reads Factory droid's command line (docs/spec.md §4.8).
func droid(argv []string, env Env) Plan {
	a := parseDroid(argv)
	p := Plan{Argv: argv, Mode: a.mode()}
	if a.info {
		p.Mode = ""
		return p
	}
	if a.worktree {
		p.Unknown = "--worktree runs in a folder that does not exist yet"
		return p
	}
	if v := env.Getenv("FACTORY_ENV"); v != "" && v != "production" {
		p.Unknown = "FACTORY_ENV=" + v + " moves droid's folder"
		return p
	}
	home := cmp.Or(env.Getenv("FACTORY_HOME_OVERRIDE"), env.Home)
	sessions := filepath.Join(abs(home, env), ".factory", "sessions")
	cwd := env.Cwd
	if a.cwd != "" {
		cwd = abs(a.cwd, env)
		if real, err := filepath.EvalSymlinks(cwd); err == nil {
			cwd = real
		}
	}
	dir := filepath.Join(sessions, droidProjectDir(cwd))
	p.Watch = []Watch{{Dir: dir, Pattern: "*.jsonl"}}
	id := a.sessionID
	switch {
	case a.cmd == "exec" && a.fork != "", a.cmd != "exec" && a.fork != "", a.resume && a.forkPick:
		return p // the source is only read; the fork is new
	case a.cmd == "exec":
	case a.resume && a.resumeID == "":
		// The picker and --last (droid's most recent session, by its own
		// index): the companion's SessionStart hook claims what droid
		// opens, before it writes to it.
		p.Unknown = "--resume without a session id opens a picker"
		if a.last {
			p.Unknown = "--last resumes droid's most recent session by droid's own index"
		}
		p.Watch = nil
		return p
	case a.resume:
		id = a.resumeID
	}
	if id == "" {
		return p // a new session, in dir
	}
	if !droidID(id) {
		p.Unknown = "the session id " + ShellQuote(id) + " is not one padrun can read"
		return p
	}
	file, why := droidSession(sessions, dir, id)
	if why != "" {
		p.Unknown = why
		return p
	}
	p.Files, p.SessionID = []string{file}, id
	return p
}

// droidSession is the file droid loads for session id (findSessionFile
// with searchAllProjects, 0.225.2): the project folder's, the sessions
// folder's own, its btw folder's, else the one project folder ("-…") that
// has it. Found in several project folders, droid takes the first its
// directory listing gives: why says so.
func droidSession(sessions, dir, id string) (file, why string) {
	name := id + ".jsonl"
	for _, d := range []string{dir, sessions, filepath.Join(sessions, "btw")} {
		if fi, err := os.Stat(filepath.Join(d, name)); err == nil && fi.Mode().IsRegular() {
			return filepath.Join(d, name), ""
		}
	}
	des, _ := os.ReadDir(sessions)
	var found []string
	for _, de := range des {
		if f := filepath.Join(sessions, de.Name(), name); de.IsDir() && strings.HasPrefix(de.Name(), "-") {
			if fi, err := os.Stat(f); err == nil && fi.Mode().IsRegular() {
				found = append(found, f)
			}
		}
	}
	switch len(found) {
	case 0:
		return filepath.Join(dir, name), "" // droid finds none and writes none
	case 1:
		return found[0], ""
	}
	return "", "session " + id + " is in several project folders, and droid takes the first its listing gives"
}

// WithDroidCompanion returns droid's argv with its settings file at path
// (padrun's hooks) loaded by --settings, given after the command that
// opens the session; ok is false when argv has a --settings of its own:
// droid would keep only one of the two.
func WithDroidCompanion(argv []string, path string) (out []string, ok bool) {
	a := parseDroid(argv)
	if a.settings {
		return argv, false
	}
	at := max(a.cmdAt, 0) + 1
	return slices.Concat(argv[:at], []string{"--settings", path}, argv[at:]), true
}

// droidHookSettings are the hooks padrun's droid settings file carries:
// SessionStart (a start, a resume, a switch in /sessions) runs before droid
// writes to the session it opens; UserPromptSubmit's exit 2 blocks a turn.
func droidHookSettings(hook string) []byte {
	return hookSettings(hook, "SessionStart", "UserPromptSubmit")
}
