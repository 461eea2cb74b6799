package harness

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf16"

	"github.com/padrun/padrun/marker/ident"
)

// claude's options by how they take values (commander): one value, an
// optional value (taken unless the next word is a flag), or a list (every
// following word up to the next flag).
var (
	claudeValue = words{
		"--agent", "--agents", "--append-system-prompt", "--append-system-prompt-file",
		"--debug-file", "--effort", "--fallback-model", "--input-format",
		"--json-schema", "--max-budget-usd", "--max-turns", "--model", "-n",
		"--name", "--output-format", "--permission-mode", "--permission-prompt-tool",
		"--plugin-dir", "--plugin-url", "--remote-control-session-name-prefix",
		"--session-id", "--setting-sources", "--settings", "--system-prompt",
		"--system-prompt-file",
	}
	claudeOptional = words{
		"-d", "--debug", "--from-pr", "--prompt-suggestions", "--remote-control",
		"-r", "--resume", "-w", "--worktree",
	}
	claudeList = words{
		"--add-dir", "--allowedTools", "--allowed-tools", "--betas",
		"--disallowedTools", "--disallowed-tools", "--file", "--mcp-config", "--tools",
	}
	claudeCommands = words{
		"mcp", "config", "doctor", "update", "upgrade", "install", "plugin",
		"setup-token", "migrate-installer", "agents", "auth",
	}
)

type claudeArgs struct {
	print, cont, resume, fork, noPersist, worktree, info bool
	background                                           bool // --bg: the session runs in claude's daemon
	resumeID, sessionID, outputFormat, inputFormat       string
	contAt, resumeAt, resumeEnd                          int // argv indexes: -c, -r and past its value
}

func parseClaude(argv []string) claudeArgs {
	a := claudeArgs{contAt: -1}
	positional := false
	for i := 1; i < len(argv); i++ {
		arg := argv[i]
		if arg == "--" {
			break
		}
		start := i
		name, value, hasValue := arg, "", false
		if strings.HasPrefix(arg, "--") {
			name, value, hasValue = strings.Cut(arg, "=")
		}
		takeValue := func() bool {
			if hasValue {
				return true
			}
			if i+1 < len(argv) {
				i++
				value = argv[i]
				return true
			}
			return false
		}
		switch {
		case name == "-p" || name == "--print":
			a.print = true
		case name == "-c" || name == "--continue":
			a.cont, a.contAt = true, i
		case name == "--fork-session":
			a.fork = true
		case name == "--bg" || name == "--background":
			a.background = true
		case name == "--no-session-persistence":
			a.noPersist = true
		case name == "-h" || name == "--help" || name == "-v" || name == "--version":
			a.info = true
		case claudeValue.has(name):
			if takeValue() {
				switch name {
				case "--session-id":
					a.sessionID = value
				case "--output-format":
					a.outputFormat = value
				case "--input-format":
					a.inputFormat = value
				}
			}
		case claudeOptional.has(name):
			if !hasValue && i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "-") {
				i++
				value, hasValue = argv[i], true
			}
			switch name {
			case "-r", "--resume":
				a.resume, a.resumeID, a.resumeAt, a.resumeEnd = true, value, start, i+1
			case "-w", "--worktree":
				a.worktree = true
			}
		case claudeList.has(name):
			for !hasValue && i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "-") {
				i++
			}
		case !strings.HasPrefix(arg, "-") && !positional:
			positional = true
			if claudeCommands.has(arg) {
				a.info = true
				return a
			}
		}
	}
	return a
}

// claudeProjectDir encodes cwd as Claude Code names its project folder
// (cwd.replace(/[^a-zA-Z0-9]/g, "-") in JavaScript): every UTF-16 unit but
// an ASCII letter or digit becomes a dash, so a character outside the Basic
// Multilingual Plane becomes two.
func claudeProjectDir(cwd string) string {
	var b strings.Builder
	for _, r := range cwd {
		if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteString(strings.Repeat("-", utf16.RuneLen(r)))
		}
	}
	return b.String()
}

// mode is the run's mode, as padrun records it.
func (a claudeArgs) mode() string {
	switch {
	case a.inputFormat == "stream-json":
		return "rpc"
	case a.outputFormat == "json" || a.outputFormat == "stream-json":
		return "json"
	case a.print:
		return "print"
	}
	return "interactive"
}

// claude reads Claude Code's command line (docs/spec.md §4.2).
func claude(argv []string, env Env) Plan {
	a := parseClaude(argv)
	p := Plan{Argv: argv, Mode: a.mode()}
	if a.info || a.noPersist {
		p.Mode = ""
		return p
	}
	if a.background {
		// claude hands the session to its background daemon and returns at
		// once: the daemon, not padrun's child, writes the transcript for as
		// long as it likes. It cannot be guarded; argv is left alone.
		p.Unknown = "--bg hands the session to claude's background daemon, which padrun cannot guard"
		return p
	}
	if a.worktree {
		p.Unknown = "--worktree runs in a folder that does not exist yet"
		return p
	}
	config := env.Getenv("CLAUDE_CONFIG_DIR")
	if config == "" {
		config = filepath.Join(env.Home, ".claude")
	}
	enc := claudeProjectDir(env.Cwd)
	if len(enc) > 200 {
		p.Unknown = "the project folder name is too long: Claude Code shortens it with a hash"
		return p
	}
	dir := filepath.Join(abs(config, env), "projects", enc)
	watch := Watch{Dir: dir, Pattern: "*.jsonl"}
	file := func(id string) string { return filepath.Join(dir, id+".jsonl") }
	switch {
	case a.resume && a.fork, a.cont && a.fork:
		p.Watch = []Watch{watch} // the source is only read; the fork is new
		return p
	case a.resume && a.print && a.resumeID != "" && !ident.ValidUUID(a.resumeID):
		// In print mode, claude resumes a session by its title.
		id, why := claudeTitled(dir, a.resumeID)
		if id == "" {
			p.Unknown = why
			return p
		}
		p.Files, p.SessionID = []string{file(id)}, id
		if !env.NoPin {
			p.Argv = append(append(slices.Clone(argv[:a.resumeAt]), "--resume", id), argv[a.resumeEnd:]...)
		}
	case a.resume:
		if !ident.ValidUUID(a.resumeID) {
			claudePicker(&p, a, dir, abs(config, env), env)
			return p
		}
		p.Files, p.SessionID = []string{file(a.resumeID)}, a.resumeID
	case a.sessionID != "":
		p.Files, p.SessionID = []string{file(a.sessionID)}, a.sessionID
	case a.cont:
		if f := newest([]string{dir}, "*.jsonl", nil); f != "" {
			id := strings.TrimSuffix(filepath.Base(f), ".jsonl")
			p.Files, p.SessionID = []string{f}, id
			if !env.NoPin {
				p.Argv = append(append(slices.Clone(argv[:a.contAt]), "--resume", id), argv[a.contAt+1:]...)
			}
			break
		}
		fallthrough // nothing to continue: a new session
	default:
		if !env.NoPin && !a.cont {
			id := ident.NewUUID()
			p.Files, p.SessionID = []string{file(id)}, id
			p.Argv = append([]string{argv[0], "--session-id", id}, argv[1:]...)
		}
	}
	p.Watch = []Watch{watch}
	return p
}

// claudePicker fills p for --resume without a session id, which opens
// claude's picker in the folder dir of the config folder config.
func claudePicker(p *Plan, a claudeArgs, dir, config string, env Env) {
	// claude 2.1.197 awaited its SessionStart hooks before it wrote to the
	// session picked; claude 2.1.332 starts them in the background and
	// appends its metadata (a "mode" line) to the picked file at once, so
	// the hook's refusal comes after a byte has reached a file another
	// padrun may hold. No earlier hook or setting runs between the pick and
	// that write. What does: the pick reads claude's live sessions (its
	// sessions folder, 2.1.332's picker: txe -> listAllLiveSessions), then
	// loads the picked transcript, then writes (measured under strace:
	// 20-30 ms from the load to the write). So padrun holds every free
	// session of the project while the picker is open, and refuses a held
	// one as claude loads it (docs/spec.md §4.2).
	// The sessions held elsewhere are leased too (as gemini's, Lease):
	// claude's open of one for writing waits in the kernel until padrun has
	// refused it, however late padrun sees the load.
	if !env.NoCompanion && !a.print {
		watch := Watch{Dir: dir, Pattern: "*.jsonl"}
		p.Picker = &Picker{Files: claudeSessions(dir), Signal: filepath.Join(config, "sessions")}
		p.Watch, p.Lease = []Watch{watch}, []Watch{watch}
		return
	}
	p.Unknown = "--resume without a session id opens a picker"
	if !claudeAwaitsHooks(env.Version) {
		p.Unknown += ", and claude " + cmp.Or(env.Version, "newer than 2.1.197") + " writes to the session picked before padrun's hook can refuse it"
	}
}

// claudeSessions lists the session files of a claude project folder.
func claudeSessions(dir string) []string {
	des, _ := os.ReadDir(dir)
	var files []string
	for _, de := range des {
		if id, ok := strings.CutSuffix(de.Name(), ".jsonl"); ok && de.Type().IsRegular() && ident.ValidUUID(id) {
			files = append(files, filepath.Join(dir, de.Name()))
		}
	}
	return files
}

// claudeAwaitsHooks reports whether this claude release waits for its
// SessionStart hooks before it writes to a session picked in its -r picker,
// so that the hook stops it first: 2.1.197 does, 2.1.332 does not. The
// releases between are untested and taken as the newer, as is an unknown one.
func claudeAwaitsHooks(release string) bool {
	v, ok := parseVersion(release)
	return ok && compare(v, version{2, 1, 197}) <= 0
}
