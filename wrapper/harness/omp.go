package harness

import (
	"cmp"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/padrun/padrun/marker/ident"
)

// omp (oh-my-pi) is a fork of pi run by bun (docs/spec.md §4.8): pi's
// session files (a "session" header, then JSONL appended), pi's -e
// extensions (through its shim: pi's companion loads unchanged), but argv
// rules of its own, mirrored here from 18.1.17 and 18.2.3, which read argv
// alike (src/cli/args.ts, src/cli/flag-tables.ts, src/cli-commands.ts,
// src/main.ts createSessionManager, src/session/session-paths.ts).

// ompValues are the flags whose setter takes the next argument, whatever
// it is (STRING_SETTERS), and --profile and --alias, which take it too.
var ompValues = []string{
	"--cwd", "--config", "--add-dir", "--mode", "--fork", "--provider", "--model", "--smol", "--slow",
	"--prewalk-into", "--plan-yolo-into", "--max-time", "--service-tier", "--api-key", "--system-prompt",
	"--append-system-prompt", "--provider-session-id", "--prompt-cache-key", "--session-dir", "--models", "--tools",
	"--thinking", "--export", "--hook", "--extension", "-e", "--trusted-extension", "--plugin-dir", "--skills",
	"--approval-mode", "--profile", "--alias",
}

// ompOptional take the next argument unless it starts with "-" or is
// empty (OPTIONAL_FLAGS); --plan, unless it starts with "-".
var ompOptional = []string{"--resume", "-r", "--session", "--plan"}

// ompBools take no value (VALUELESS_FLAGS and the short aliases).
var ompBools = []string{
	"--help", "-h", "--version", "-v", "--allow-home", "--continue", "-c", "--from-claude", "--from-codex",
	"--no-session", "--no-tools", "--no-lsp", "--no-pty", "--hide-thinking", "--advisor", "--external-thinking",
	"--prewalk", "--no-prewalk", "--plan-yolo", "--print", "-p", "--print-thoughts", "--no-extensions",
	"--no-skills", "--no-rules", "--no-title", "--auto-approve", "--yolo",
}

// ompCommands are the first words that run a command of omp's
// (cli-commands.ts) rather than a session; "launch" and "acp" are read
// apart.
var ompCommands = []string{
	"agents", "auth-broker", "auth-gateway", "bench", "browser-relay", "cleanse", "collab", "commit", "completions",
	"__complete", "compress", "config", "dry-balance", "gc", "grep", "gallery", "git", "grievances", "images",
	"if-bench", "install", "join", "models", "plugin", "ps", "say", "share", "setup", "shell", "read", "render", "ssh",
	"stats", "update", "usage", "tiny-models", "token", "ttsr", "worktree", "search", "help",
	// reserved words omp refuses to launch with (reservedTopLevelWordMessage)
	"extensions", "list", "remove", "uninstall", "marketplace", "discover", "upgrade", "enable", "disable",
}

// ompIDArg is omp's test for a session id after -c
// (normalizeContinueSessionArgs, a UUID's 36 characters in any case): then
// -c resumes it.
func ompIDArg(s string) bool { return ident.ValidUUID36(s) }

type ompArgs struct {
	info, acp, print, cont, noSession, fromOther bool
	resume                                       *string // set by -r/--resume/--session: "" for the picker
	resumeAt                                     int     // argv index of -r's value; -1 without one
	mode, fork, sessionDir, profile, cwd         string
	messages, unknown                            []string
}

// parseOmp reads argv as omp's resolveCliArgv and parseArgs do.
func parseOmp(argv []string) ompArgs {
	a := ompArgs{resumeAt: -1}
	if sub := ompSubcommand(argv); sub > 0 {
		switch argv[sub] {
		case "launch":
			argv = slices.Delete(slices.Clone(argv), sub, sub+1)
		case "acp":
			a.acp = true
			return a
		default:
			a.info = true
			return a
		}
	}
	for i := 1; i < len(argv); i++ {
		arg := argv[i]
		if arg == "--" {
			a.messages = append(a.messages, argv[i+1:]...)
			break
		}
		name, value, inline := arg, "", false
		if strings.HasPrefix(arg, "--") {
			name, value, inline = strings.Cut(arg, "=")
		}
		switch {
		case slices.Contains(ompValues, name):
			if !inline && i+1 < len(argv) {
				i++
				value, inline = argv[i], true
			}
			if inline {
				a.value(name, value)
			}
		case slices.Contains(ompOptional, name):
			next := ""
			if inline {
				next = value
			} else if i+1 < len(argv) && argv[i+1] != "" && !strings.HasPrefix(argv[i+1], "-") {
				i++
				next, inline = argv[i], true
			}
			if name != "--plan" {
				a.resume, a.resumeAt = &next, -1
				if inline && next != "" {
					a.resumeAt = i
				}
			}
		case slices.Contains(ompBools, name):
			a.flag(name)
		case strings.HasPrefix(arg, "@"):
		case !strings.HasPrefix(arg, "-") || arg == "-":
			a.messages = append(a.messages, arg)
		default:
			// An extension's flag (or a typo omp refuses): a following
			// plain word may be its value.
			a.unknown = append(a.unknown, name)
			if !inline && i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "-") && !strings.HasPrefix(argv[i+1], "@") {
				i++
			}
		}
	}
	return a
}

// ompSubcommand is the index of the first word that names a command of
// omp's, after its global flags (leadingSubcommandIndex); 0 when none.
func ompSubcommand(argv []string) int {
	for i := 1; i < len(argv); i++ {
		arg := argv[i]
		if arg == "--" {
			return 0
		}
		if !strings.HasPrefix(arg, "-") {
			if arg == "launch" || arg == "acp" || slices.Contains(ompCommands, arg) {
				return i
			}
			return 0
		}
		if (arg == "-h" || arg == "--help" || arg == "-v" || arg == "--version") && i == 1 {
			return 0
		}
		if i+1 < len(argv) && ompConsumes(arg, argv[i+1]) {
			i++
		}
	}
	return 0
}

// ompConsumes is omp's flagConsumesValue.
func ompConsumes(flag, next string) bool {
	if strings.HasPrefix(flag, "--") && strings.Contains(flag, "=") {
		return false
	}
	if slices.Contains(ompValues[:len(ompValues)-2], flag) {
		return true
	}
	valueLike := !strings.HasPrefix(next, "-")
	if slices.Contains(ompOptional, flag) {
		return valueLike && next != ""
	}
	return valueLike && strings.HasPrefix(flag, "--") && !slices.Contains(ompBools, flag)
}

func (a *ompArgs) value(name, v string) {
	switch name {
	case "--mode":
		if slices.Contains([]string{"text", "json", "rpc", "acp", "rpc-ui"}, v) {
			a.mode = v
		}
	case "--fork":
		a.fork = v
	case "--session-dir":
		a.sessionDir = v
	case "--profile":
		a.profile = v
	case "--cwd":
		a.cwd = v
	case "--export":
		a.info = true
	}
}

func (a *ompArgs) flag(name string) {
	switch name {
	case "--help", "-h", "--version", "-v":
		a.info = true
	case "--continue", "-c":
		a.cont = true
	case "--print", "-p":
		a.print = true
	case "--no-session":
		a.noSession = true
	case "--from-claude", "--from-codex":
		a.fromOther = true
	}
}

// omp reads omp's command line (docs/spec.md §4.8). A file named on it is
// held before omp starts; a session omp picks itself (-c, an id, the
// picker, its autoResume setting) is claimed by the companion at
// session_start, before omp writes to it; new files are watched for.
func omp(argv []string, env Env) Plan {
	argv = slices.Clone(argv)
	a := parseOmp(argv)
	p := Plan{Argv: argv, Mode: ompMode(a, env)}
	if a.info || a.noSession {
		p.Mode = ""
		return p
	}
	dir := ompSessionDir(a, env)
	p.Watch = []Watch{{Dir: dir, Pattern: "*.jsonl"}}
	switch {
	case a.acp:
		p.Mode = ModeRPC
		p.Unknown = "omp acp opens the sessions its client asks for"
	case a.fork != "" || a.fromOther:
		// The source is only read; the fork or import is a new file.
	case a.resume != nil && *a.resume == "":
		p.Unknown = "--resume opens a picker"
	case a.resume != nil && ompIsPath(*a.resume):
		if a.cwd != "" && !filepath.IsAbs(*a.resume) {
			p.Unknown = "--cwd moves omp before it reads a relative --resume path"
			return p
		}
		f := ompResolve(env.Cwd, *a.resume)
		p.Files, p.SessionID = []string{f}, ompSessionID(f)
	case a.resume != nil:
		p.Unknown = "omp resolves a session id by its own listing"
	case a.cont && slices.ContainsFunc(a.messages, ompIDArg):
		p.Unknown = "-c with a session id resumes it by omp's own listing"
	case a.cont:
		p.Unknown = "-c continues the session omp last used in this terminal"
	}
	return p
}

// ompSessionID is the id in an omp session's header (ompHeaderID).
func ompSessionID(path string) string {
	f, err := openSession(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	id, _ := ompHeaderID(json.NewDecoder(sessionHead(f)))
	return id
}

// ompHeaderID reads an omp session's header: pi's "session" line, after
// omp's "title" line (a slot it rewrites in place) when the file starts
// with one.
func ompHeaderID(d *json.Decoder) (string, bool) {
	for range 2 {
		var h piHeader
		if d.Decode(&h) != nil {
			return "", false
		}
		if h.Type == "session" {
			return h.ID, true
		}
		if h.Type != "title" {
			return "", false
		}
	}
	return "", false
}

// ompResolve is node's path.resolve(cwd, p): no ~ expansion.
func ompResolve(cwd, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(cwd, p)
}

// ompIsPath: a --resume value that omp opens as a file.
func ompIsPath(v string) bool {
	return strings.ContainsAny(v, `/\`) || strings.HasSuffix(v, ".jsonl")
}

func ompMode(a ompArgs, env Env) string {
	switch {
	case a.mode == "rpc" || a.mode == "rpc-ui" || a.mode == "acp":
		return ModeRPC
	case a.mode == "json":
		return ModeJSON
	case a.print || !env.StdinTTY:
		return ModePrint
	}
	return ModeInteractive
}

// ompAgentDir is omp's agent folder: --profile's, else
// $PI_CODING_AGENT_DIR, else $OMP_PROFILE's (or $PI_PROFILE's), else
// <config root>/agent, the config root being ~/$PI_CONFIG_DIR (default
// .omp). default is true for the last: only then may XDG_DATA_HOME move
// omp's data (pi-utils dirs.ts).
func ompAgentDir(a ompArgs, env Env) (dir, profile string, def bool) {
	root := filepath.Join(env.Home, cmp.Or(env.Getenv("PI_CONFIG_DIR"), ".omp"))
	profile = a.profile
	if profile == "" && env.Getenv("PI_CODING_AGENT_DIR") != "" {
		return abs(env.Getenv("PI_CODING_AGENT_DIR"), env), "", false
	}
	if profile == "" {
		profile = cmp.Or(env.Getenv("OMP_PROFILE"), env.Getenv("PI_PROFILE"))
	}
	if profile == "default" {
		profile = ""
	}
	if profile != "" {
		return filepath.Join(root, "profiles", profile, "agent"), profile, true
	}
	return filepath.Join(root, "agent"), "", true
}

// ompSessionDir is the folder where omp writes a new session:
// --session-dir > $PI_CODING_AGENT_SESSION_DIR > <data>/sessions/<enc(cwd)>,
// <data> being the agent dir, or $XDG_DATA_HOME/omp (a profile's below
// it) when that folder exists.
func ompSessionDir(a ompArgs, env Env) string {
	if a.sessionDir != "" {
		return ompResolve(env.Cwd, a.sessionDir)
	}
	if d := env.Getenv("PI_CODING_AGENT_SESSION_DIR"); d != "" {
		return ompResolve(env.Cwd, d)
	}
	data, profile, def := ompAgentDir(a, env)
	if xdg := env.Getenv("XDG_DATA_HOME"); def && xdg != "" && filepath.IsAbs(xdg) {
		d := filepath.Join(xdg, "omp")
		if profile != "" {
			d = filepath.Join(d, "profiles", profile)
		}
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			data = d
		}
	}
	return filepath.Join(data, "sessions", OmpProjectDir(env.Cwd, env.Home, env.Getenv("TMPDIR")))
}

// OmpProjectDir encodes cwd as omp names its per-project session folder
// (getDefaultSessionDirName): below home "-" and the path from home, below
// the temp folder "-tmp" and the path from it, with "/", "\" and ":" as
// "-"; elsewhere pi's name.
func OmpProjectDir(cwd, home, tmp string) string {
	tmp = cmp.Or(tmp, "/tmp")
	enc := func(prefix, rel string) string {
		if rel == "." {
			return prefix
		}
		rel = strings.NewReplacer("/", "-", `\`, "-", ":", "-").Replace(rel)
		if strings.HasSuffix(prefix, "-") {
			return prefix + rel
		}
		return prefix + "-" + rel
	}
	if rel, err := filepath.Rel(ompCanon(home), cwd); err == nil && !ompOutside(rel) {
		return enc("-", rel)
	}
	if rel, err := filepath.Rel(ompCanon(tmp), cwd); err == nil && !ompOutside(rel) {
		return enc("-tmp", rel)
	}
	return PiProjectDir(cwd)
}

func ompOutside(rel string) bool { return rel == ".." || strings.HasPrefix(rel, "../") }

func ompCanon(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

func ompCompanionWanted(p Plan) bool { return len(p.Argv) > 0 && p.Mode != "" }
