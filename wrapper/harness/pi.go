package harness

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
)

// piValueFlags are pi's flags that take the next argument as their value.
var piValueFlags = map[string]bool{
	"--mode": true, "--provider": true, "--model": true, "--api-key": true, "--system-prompt": true,
	"--append-system-prompt": true, "--session": true, "--fork": true, "--session-dir": true,
	"--models": true, "--tools": true, "-t": true, "--thinking": true, "--export": true,
	"--extension": true, "-e": true, "--skill": true, "--prompt-template": true, "--theme": true,
	"--session-id": true,
}

// piCommands are pi's package commands: they run no session.
var piCommands = map[string]bool{"install": true, "remove": true, "uninstall": true, "update": true, "list": true, "config": true}

type piArgs struct {
	print, cont, resume, noSession, info       bool
	mode, session, fork, sessionDir, sessionID string
	sessionAt, contAt                          int // argv indexes of --session's value and of -c
	sessionEq                                  bool
}

// parsePi mirrors pi's parseArgs (0.74): no "--" terminator, unknown
// "--flag" takes a following non-flag word as its value, "-p" takes a
// following message.
func parsePi(argv []string) piArgs {
	a := piArgs{sessionAt: -1, contAt: -1}
	if len(argv) > 1 && piCommands[argv[1]] {
		a.info = true
		return a
	}
	for i := 1; i < len(argv); i++ {
		arg := argv[i]
		next := func() string { i++; return argv[i] }
		hasNext := i+1 < len(argv)
		if v, ok := flagValue(arg, "--session"); ok {
			a.session, a.sessionAt, a.sessionEq = v, i, true
			continue
		}
		if v, ok := flagValue(arg, "--session-id"); ok {
			a.sessionID = v
			continue
		}
		switch {
		case arg == "--help" || arg == "-h" || arg == "--version" || arg == "-v" || arg == "--list-models" || arg == "--export":
			a.info = true
			if arg == "--export" && hasNext {
				next()
			}
		case arg == "--continue" || arg == "-c":
			a.cont, a.contAt = true, i
		case arg == "--resume" || arg == "-r":
			a.resume = true
		case arg == "--no-session":
			a.noSession = true
		case arg == "--print" || arg == "-p":
			a.print = true
			if hasNext && !strings.HasPrefix(argv[i+1], "@") && (!strings.HasPrefix(argv[i+1], "-") || strings.HasPrefix(argv[i+1], "---")) {
				next()
			}
		case piValueFlags[arg] && hasNext:
			v := next()
			switch arg {
			case "--mode":
				if v == "text" || v == "json" || v == "rpc" {
					a.mode = v
				}
			case "--session":
				a.session, a.sessionAt, a.sessionEq = v, i, false
			case "--fork":
				a.fork = v
			case "--session-dir":
				a.sessionDir = v
			case "--session-id":
				a.sessionID = v
			}
		case strings.HasPrefix(arg, "--") && !strings.Contains(arg, "="):
			// An extension's flag: it takes a following plain word.
			if hasNext && !strings.HasPrefix(argv[i+1], "-") && !strings.HasPrefix(argv[i+1], "@") {
				next()
			}
		}
	}
	return a
}

// piHeader is the first line of a pi session file.
type piHeader struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

func piSessionID(path string) string {
	var h piHeader
	if firstLine(path, &h) && h.Type == "session" {
		return h.ID
	}
	return ""
}

// pi reads pi's command line (SPEC 4.1).
func pi(argv []string, env Env) Plan {
	a := parsePi(argv)
	p := Plan{Argv: argv, Mode: piMode(a, env)}
	if a.info || a.noSession {
		p.Mode = ""
		return p
	}
	agentDir := env.Getenv("PI_CODING_AGENT_DIR")
	if agentDir == "" {
		agentDir = filepath.Join(env.Home, ".pi", "agent")
	}
	agentDir = abs(agentDir, env)
	dir, err := piSessionDir(a, agentDir, env)
	if err != nil {
		return Plan{Argv: argv, Err: err}
	}
	watch := Watch{Dir: dir, Pattern: "*.jsonl"}
	pin := func(at int, path string) {
		if env.NoPin {
			return
		}
		switch {
		case at == a.contAt:
			p.Argv[at] = "--session"
			p.Argv = append(p.Argv[:at+1], append([]string{path}, p.Argv[at+1:]...)...)
		case a.sessionEq:
			p.Argv[at] = "--session=" + path
		default:
			p.Argv[at] = path
		}
	}
	switch {
	case a.fork != "":
		// The source is only read; the fork is a new file.
		p.Watch = []Watch{watch}
		return p
	case a.session != "" && (strings.ContainsAny(a.session, `/\`) || strings.HasSuffix(a.session, ".jsonl")):
		f := abs(a.session, env)
		p.Files, p.SessionID = []string{f}, piSessionID(f)
	case a.session != "":
		f := piFindID(dir, a.session)
		if f == "" {
			if other := piFindIDAnywhere(agentDir, a.session); other != "" {
				// pi offers to fork a session of another project: a new file.
				p.Watch = []Watch{watch}
				return p
			}
			return p // pi exits: no session matches
		}
		p.Files, p.SessionID = []string{f}, piSessionID(f)
		pin(a.sessionAt, f)
	case a.sessionID != "":
		p.SessionID = a.sessionID
		if f := piFindID(dir, a.sessionID); f != "" {
			p.Files = []string{f}
		} else {
			p.Unknown = "--session-id names a session that does not exist yet"
		}
	case a.resume:
		p.Unknown = "--resume opens a picker"
		return p
	case a.cont:
		if f := newest([]string{dir}, "*.jsonl", func(path string) bool { return piSessionID(path) != "" }); f != "" {
			p.Files, p.SessionID = []string{f}, piSessionID(f)
			pin(a.contAt, f)
			break
		}
		fallthrough // nothing to continue: pi starts a new session
	default:
		// A new session. pi names its file itself: pi 0.74 writes a fresh id
		// into the header of a file named for it, so a name chosen here would
		// not be the session's id. The companion claims the file at
		// session_start, before pi's first write; without it, the watch does.
	}
	p.Watch = []Watch{watch} // interactive /new and /fork write new files
	return p
}

func piMode(a piArgs, env Env) string {
	switch {
	case a.mode == "rpc":
		return "rpc"
	case a.mode == "json":
		return "json"
	case a.print || !env.StdinTTY:
		return "print"
	}
	return "interactive"
}

// piSessionDir: --session-dir > $PI_CODING_AGENT_SESSION_DIR > sessionDir
// in settings.json > <agentDir>/sessions/<enc(cwd)>. A settings.json that
// is not a regular file of the user's or root's is an error.
func piSessionDir(a piArgs, agentDir string, env Env) (string, error) {
	if a.sessionDir != "" {
		return abs(a.sessionDir, env), nil
	}
	if d := env.Getenv("PI_CODING_AGENT_SESSION_DIR"); d != "" {
		return abs(d, env), nil
	}
	b, err := readSettings("pi", filepath.Join(agentDir, "settings.json"))
	if err != nil {
		return "", err
	}
	if b != nil {
		var s struct {
			SessionDir string `json:"sessionDir"`
		}
		if json.Unmarshal(b, &s) == nil && s.SessionDir != "" {
			return abs(s.SessionDir, env), nil
		}
	}
	return filepath.Join(agentDir, "sessions", PiProjectDir(env.Cwd)), nil
}

// PiProjectDir encodes cwd as pi names its per-project session folder.
func PiProjectDir(cwd string) string {
	s := cwd
	if strings.HasPrefix(s, "/") || strings.HasPrefix(s, `\`) {
		s = s[1:]
	}
	return "--" + strings.NewReplacer("/", "-", `\`, "-", ":", "-").Replace(s) + "--"
}

// piFindID returns the session of dir that pi picks for an id prefix: of
// those whose id starts with prefix, the one of latest activity.
func piFindID(dir, prefix string) string {
	return piMatch(piList(dir), prefix)
}

// piFindIDAnywhere is pi's global search: every project's sessions, ranked
// together by latest activity.
func piFindIDAnywhere(agentDir, prefix string) string {
	des, _ := os.ReadDir(filepath.Join(agentDir, "sessions"))
	var dirs []string
	for _, de := range des {
		if de.IsDir() {
			dirs = append(dirs, filepath.Join(agentDir, "sessions", de.Name()))
		}
	}
	return piMatch(piList(dirs...), prefix)
}
