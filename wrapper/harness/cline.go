package harness

import (
	"cmp"
	"os"
	"path/filepath"
	"strings"
)

// cline's options by how commander takes their values (cline 3.0.65 and
// 3.0.57, the program's options as its CLI declares them, with the argv
// rewrite that runs first): a <value> option takes the next argument
// whatever it is, --thinking and --retries the next one unless it starts
// with "-", --auto-approve only an explicit "true" or "false".
var (
	clineValue = words{
		"-c", "--cwd", "--compaction", "--id", "-P", "--provider",
		"-k", "--key", "-m", "--model", "-s", "--system",
		"-t", "--timeout", "--config", "--data-dir", "--hooks-dir",
		"--team-name",
	}
	clineOptional = words{"--thinking", "--reasoning-effort", "--retries"}
	clineBool     = words{
		"-p", "--plan", "--json", "-i", "--tui", "-z", "--zen",
		"--acp", "--worktree", "--update", "--kanban", "-v", "--verbose",
		"-a", "--act", "-y", "--yolo", "-V", "--version", "-h",
		"--help",
	}
	// clineCommands are cline's subcommands: none writes a session, but
	// config and history open the TUI at a terminal (its config view and
	// its history picker), from where a chat starts or resumes.
	clineCommands = words{
		"auth", "config", "plugin", "skill", "connect", "mcp",
		"doctor", "history", "h", "hook", "schedule", "hub",
		"dashboard", "update", "version", "kanban",
	}
)

type clineArgs struct {
	json, tui, zen, acp, info, prompt bool
	unknown                           string // an option cline does not know: it refuses the run
	command                           string // the subcommand, when one runs
	id, cwd, config, dataDir          string
	hasDataDir                        bool
}

// parseCline mirrors commander's reading of the program's options: the
// first argument that is no option is a subcommand or the prompt, and
// every program option comes before a subcommand (positional options).
func parseCline(argv []string) clineArgs {
	var a clineArgs
	for i := 1; i < len(argv); i++ {
		arg := argv[i]
		if arg == "--" {
			a.prompt = a.prompt || i+1 < len(argv)
			break
		}
		if !strings.HasPrefix(arg, "-") || arg == "-" {
			if !a.prompt && clineCommands.has(arg) {
				a.command = arg
				return a
			}
			a.prompt = true
			continue
		}
		name, value, inline := strings.Cut(arg, "=")
		if !strings.HasPrefix(arg, "--") && len(arg) > 2 {
			// -abc: short flags run together; the first that takes a
			// value takes the rest of the word.
			for j := 1; j < len(arg); j++ {
				short := "-" + arg[j:j+1]
				if clineValue.has(short) {
					a.set(short, arg[j+1:], j+1 < len(arg), argv, &i)
					break
				}
				if !clineBool.has(short) {
					a.unknown = short
					return a
				}
				a.flag(short)
			}
			continue
		}
		switch {
		case clineValue.has(name):
			a.set(name, value, inline, argv, &i)
		case clineOptional.has(name):
			if !inline && i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "-") {
				i++
			}
		case name == "--auto-approve" || name == "--autoapprove":
			if !inline && i+1 < len(argv) && (argv[i+1] == "true" || argv[i+1] == "false") {
				i++
			}
		case clineBool.has(name) && !inline:
			a.flag(name)
		default:
			a.unknown = name
			return a
		}
	}
	return a
}

// set records a value option's value: inline, or the next argument.
func (a *clineArgs) set(name, value string, inline bool, argv []string, i *int) {
	if !inline {
		if *i+1 >= len(argv) {
			a.unknown = name // commander: the option's argument is missing
			return
		}
		*i++
		value = argv[*i]
	}
	switch name {
	case "--id":
		a.id = strings.TrimSpace(value)
	case "-c", "--cwd":
		a.cwd = value
	case "--config":
		a.config = strings.TrimSpace(value)
	case "--data-dir":
		a.dataDir, a.hasDataDir = strings.TrimSpace(value), true
	}
}

func (a *clineArgs) flag(name string) {
	switch name {
	case "--json":
		a.json = true
	case "-i", "--tui":
		a.tui = true
	case "-z", "--zen":
		a.zen = true
	case "--acp":
		a.acp = true
	case "-V", "--version", "-h", "--help", "--update", "--kanban":
		a.info = true
	}
}

// clineSessions is the folder of cline's session folders: with
// --data-dir or CLINE_SANDBOX=1 (its sandbox, which also makes the
// backend local) <dir>/sessions, dir resolved against --cwd; else
// CLINE_SESSION_DATA_DIR, else CLINE_DATA_DIR/sessions, else
// <--config, else CLINE_DIR, else ~/.cline>/data/sessions.
func clineSessions(a clineArgs, env Env) string {
	if a.hasDataDir || strings.TrimSpace(env.Getenv("CLINE_SANDBOX")) == "1" {
		cwd := env.Cwd
		if a.cwd != "" {
			cwd = filepath.Join(env.Cwd, a.cwd)
			if filepath.IsAbs(a.cwd) {
				cwd = a.cwd
			}
		}
		dir := cmp.Or(a.dataDir, strings.TrimSpace(env.Getenv("CLINE_SANDBOX_DATA_DIR")))
		if dir == "" {
			dir = filepath.Join(cmp.Or(env.Getenv("TMPDIR"), os.TempDir()), "cline-sandbox")
		}
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(cwd, dir)
		}
		return filepath.Join(filepath.Clean(dir), "sessions")
	}
	if d := strings.TrimSpace(env.Getenv("CLINE_SESSION_DATA_DIR")); d != "" {
		return abs(d, env)
	}
	if d := strings.TrimSpace(env.Getenv("CLINE_DATA_DIR")); d != "" {
		return filepath.Join(abs(d, env), "sessions")
	}
	base := cmp.Or(a.config, strings.TrimSpace(env.Getenv("CLINE_DIR")))
	if base == "" {
		base = filepath.Join(env.Home, ".cline")
	}
	return filepath.Join(abs(base, env), "data", "sessions")
}

// ClineFiles are the files of cline's session id in its sessions folder:
// the messages, which every turn rewrites whole, and the session's
// record, which every run rewrites.
func clineFiles(dir, id string) []string {
	d := filepath.Join(dir, id)
	return []string{filepath.Join(d, id+".messages.json"), filepath.Join(d, id+".json")}
}

// cline reads the Cline CLI's command line (docs/spec.md §4.8).
func cline(argv []string, env Env) Plan {
	a := parseCline(argv)
	p := Plan{Argv: argv}
	// cline reads --config anywhere in argv before commander runs.
	for i, arg := range argv[1:] {
		if arg == "--config" && i+2 < len(argv) {
			a.config = strings.TrimSpace(argv[i+2])
			break
		}
		if v, ok := strings.CutPrefix(arg, "--config="); ok {
			a.config = strings.TrimSpace(v)
			break
		}
	}
	if a.unknown != "" || a.info {
		return p // cline refuses an unknown option; the others open no session
	}
	dir := clineSessions(a, env)
	watch := Watch{Dir: dir, Depth: 1, Pattern: "*.messages.json", Record: "*.json"}
	switch {
	case a.command == "config" || a.command == "history" || a.command == "h":
		if !env.StdinTTY {
			return p // they print and end
		}
		p.Mode, p.Watch = ModeInteractive, []Watch{watch}
		if a.command != "config" {
			p.Unknown = "cline history opens a picker"
		}
		return p
	case a.command != "":
		return p
	case a.acp:
		p.Mode, p.Watch = ModeRPC, []Watch{watch}
		p.Unknown = "an ACP client names the session it loads after cline has started"
		return p
	case a.id != "":
		// --id opens the TUI on that session, whatever else argv says.
		p.Mode, p.SessionID, p.Files = ModeInteractive, a.id, clineFiles(dir, a.id)
	case a.zen:
		p.Mode = ModePrint
		p.Unknown = "--zen hands the session to cline's hub daemon, which goes on after the run"
		return p
	case a.json:
		p.Mode = ModeJSON
	case a.tui || (!a.prompt && env.StdinTTY):
		p.Mode = ModeInteractive
	default:
		p.Mode = ModePrint
	}
	p.Watch = []Watch{watch} // a new session, and the TUI's /history and /fork
	return p
}
