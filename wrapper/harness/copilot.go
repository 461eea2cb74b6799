package harness

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/padrun/padrun/marker/ident"
)

// copilot's options by how they take values (`copilot --help` of 1.0.102
// and commander's options in 1.0.40's app.js): one value, an optional one
// (taken unless the next word is a flag), or an optional list (every word
// up to the next flag).
var (
	copilotValue = words{
		"-i", "--interactive", "-p", "--prompt", "--model",
		"--reasoning-effort", "--effort", "--context", "--auto-tier", "--agent",
		"-n", "--name", "--session-id", "-C", "--log-dir",
		"--extension-sdk-path", "--log-level", "--stream", "--output-format",
		"--add-dir", "--attachment", "--disable-mcp-server", "--enable-mcp-server",
		"--add-github-mcp-toolset", "--add-github-mcp-tool", "--plugin-dir",
		"--additional-mcp-config", "--dynamic-retrieval", "--environment-compute-id",
		"--environment-host", "--max-ai-credits", "--max-autopilot-continues",
		"--mcp-github-auth", "--mode", "--usage-output-file", "--config-dir",
		"--env", "--header", "--host", "--timeout", "--tools",
	}
	copilotOptional = words{
		"-r", "--resume", "--connect", "--share", "--bash-env", "--mouse",
	}
	copilotList = words{
		"--allow-tool", "--allow-url", "--available-tools", "--deny-tool",
		"--deny-url", "--excluded-tools", "--secret-env-vars",
	}
	copilotCommands = words{
		"app", "login", "help", "init", "config", "update", "version",
		"workflow", "sessions", "memories", "plugin", "mcp", "skill",
		"instruction", "lsp", "sandbox", "completion",
	}
)

type copilotArgs struct {
	print, cont, resume, acp, connect, info bool
	resumeID, sessionID, outputFormat       string
	contAt                                  int
}

func parseCopilot(argv []string) copilotArgs {
	a := copilotArgs{contAt: -1}
	for i := 1; i < len(argv); i++ {
		arg := argv[i]
		if arg == "--" {
			break
		}
		name, value, hasValue := arg, "", false
		if strings.HasPrefix(arg, "--") {
			name, value, hasValue = strings.Cut(arg, "=")
		}
		switch {
		case name == "--continue":
			a.cont, a.contAt = true, i
		case name == "--acp":
			a.acp = true
		case name == "-h" || name == "--help" || name == "-v" || name == "--version":
			a.info = true
		case copilotValue.has(name):
			if !hasValue && i+1 < len(argv) {
				i++
				value = argv[i]
			}
			switch name {
			case "-p", "--prompt":
				a.print = true
			case "--session-id":
				a.sessionID = value
			case "--output-format":
				a.outputFormat = value
			}
		case copilotOptional.has(name):
			if !hasValue && i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "-") {
				i++
				value = argv[i]
			}
			switch name {
			case "-r", "--resume":
				a.resume, a.resumeID = true, value
			case "--connect":
				a.connect = true
			}
		case copilotList.has(name):
			for !hasValue && i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "-") {
				i++
			}
		case !strings.HasPrefix(arg, "-") && copilotCommands.has(arg):
			a.info = true
			return a
		}
	}
	return a
}

// mode is the run's mode, as padrun records it.
func (a copilotArgs) mode() string {
	switch {
	case a.acp:
		return ModeRPC
	case a.outputFormat == "json":
		return ModeJSON
	case a.print:
		return ModePrint
	}
	return ModeInteractive
}

// copilot reads Copilot CLI's command line (docs/spec.md §4.6). copilot resolves
// names, id prefixes and --continue from its own SQLite database
// (session-store.db), which padrun does not read: only a session named by
// its full id, or the one session there is, is known before copilot runs.
func copilot(argv []string, env Env) Plan {
	a := parseCopilot(argv)
	p := Plan{Argv: argv, Mode: a.mode()}
	if a.info {
		p.Mode = ""
		return p
	}
	if a.connect {
		p.Unknown = "--connect runs a remote session"
		return p
	}
	home := cmp.Or(env.Getenv("COPILOT_HOME"), filepath.Join(env.Home, ".copilot"))
	state := filepath.Join(abs(home, env), "session-state")
	file := func(id string) string { return filepath.Join(state, id, "events.jsonl") }
	p.Watch = []Watch{{Dir: state, Depth: 1, Pattern: "events.jsonl"}}
	// Whatever padrun names before the start, copilot names the session it
	// opens by writing its inuse.<PID>.lock into the session's folder
	// before it appends (measured: 1.0.40 and 1.0.102 write the lock and
	// open events.jsonl for appending some 50-150 ms later): that is the
	// claim of --continue among several sessions, of a prefix or a name,
	// of its picker and of the TUI's /resume.
	p.InUseClaims = state
	id := a.sessionID
	if a.resume {
		id = a.resumeID
	}
	switch {
	case a.cont && a.resume:
		// copilot refuses the pair itself, before it writes.
	case a.resume && id == "":
		p.Unknown = "--resume without a session id opens a picker"
	case id != "":
		// An exact id comes first in copilot's lookup; a full UUID it does
		// not know starts a new session of that id. Anything else is a task
		// id, a prefix or a name, looked up in its database.
		if fi, err := os.Stat(filepath.Dir(file(id))); (err != nil || !fi.IsDir()) && !ident.ValidUUID(id) {
			p.Unknown = "copilot looks " + id + " up as a prefix or name in its own database"
			break
		}
		p.Files, p.SessionID = []string{file(id)}, id
	case a.cont:
		ids := copilotSessions(state)
		if len(ids) > 1 {
			p.Unknown = "--continue picks by copilot's own database"
			break
		}
		if len(ids) == 0 {
			break // nothing to continue: a new session
		}
		p.Files, p.SessionID = []string{file(ids[0])}, ids[0]
		if !env.NoPin {
			p.Argv = append(append(slices.Clone(argv[:a.contAt]), "--resume="+ids[0]), argv[a.contAt+1:]...)
		}
	}
	return p
}

// copilotSessions lists the session folders under session-state (its
// lock folders start with a dot).
func copilotSessions(state string) []string {
	des, _ := os.ReadDir(state)
	var ids []string
	for _, de := range des {
		if de.IsDir() && !strings.HasPrefix(de.Name(), ".") {
			ids = append(ids, de.Name())
		}
	}
	return ids
}

// copilotInUse lists copilot's in-use locks of a session: each copilot that
// opens session-state/<id>/ writes inuse.<PID>.lock there, holding its pid,
// and removes it when it closes the session; another copilot only warns of
// a live one ("This session may already be in use"). 1.0.40's app.js:
//
//	uRs="inuse.",dRs=".lock",mRs=/^inuse\.(\d+)\.lock$/
//	Dbt(t){let e=pRs(t,process.pid); ... writeFile(e,`${process.pid}\n`)}
//
// 1.0.102 (its native runtime) writes the same lock, and beside it an
// inuse.<PID>.hold that it flocks while the session is open.
func copilotInUse(file string) ([]InUseLock, bool) {
	dir := filepath.Dir(file)
	if filepath.Base(file) != "events.jsonl" || filepath.Base(filepath.Dir(dir)) != "session-state" {
		return nil, false
	}
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, true
	}
	var out []InUseLock
	for _, de := range des {
		digits, pre := strings.CutPrefix(de.Name(), "inuse.")
		digits, suf := strings.CutSuffix(digits, ".lock")
		if !pre || !suf || digits == "" || strings.Trim(digits, "0123456789") != "" {
			continue
		}
		pid, err := strconv.Atoi(digits)
		fi, ferr := de.Info()
		if err != nil || pid <= 0 || ferr != nil || !fi.Mode().IsRegular() {
			continue
		}
		l := InUseLock{Pid: pid, Path: filepath.Join(dir, de.Name()), Written: fi.ModTime()}
		if hold := filepath.Join(dir, "inuse."+digits+".hold"); isFile(hold) {
			l.Also = []string{hold}
		}
		out = append(out, l)
	}
	return out, true
}
