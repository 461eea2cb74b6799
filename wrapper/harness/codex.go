package harness

import (
	"encoding/json"
	"path/filepath"
	"strings"
)

var (
	codexValue = words{
		"-c", "--config", "--enable", "--disable", "--remote",
		"--remote-auth-token-env", "-i", "--image", "-m", "--model",
		"--local-provider", "-p", "--profile", "-s", "--sandbox",
		"-C", "--cd", "--add-dir", "--thread-source", "--cyber-access-program",
		"--output-schema", "--color", "-o", "--output-last-message",
		"-a", "--ask-for-approval",
	}
	// codexNoSession are subcommands that run no agent session.
	codexNoSession = words{
		"login", "logout", "mcp", "plugin", "app-server", "remote-control",
		"completion", "update", "doctor", "sandbox", "debug", "apply", "a",
		"queue", "archive", "delete", "migrate-rollouts", "migrate-nfs-db",
		"unarchive", "cloud", "exec-server", "features", "help", "agents",
		"mcp-server",
	}
)

type codexArgs struct {
	exec, resume, fork, review, last, all, ephemeral, json, info bool
	id                                                           string
	idAt, lastAt                                                 int
}

// parseCodex reads codex's clap command line: global options, then an
// optional subcommand (exec, resume, fork, ...), then its own.
func parseCodex(argv []string) codexArgs {
	a := codexArgs{idAt: -1, lastAt: -1}
	words := 0 // positional words seen at the current level
	for i := 1; i < len(argv); i++ {
		arg := argv[i]
		if arg == "--" {
			break
		}
		name, _, hasValue := strings.Cut(arg, "=")
		switch {
		case name == "--last":
			a.last, a.lastAt = true, i
		case name == "--all":
			a.all = true
		case name == "--ephemeral":
			a.ephemeral = true
		case name == "--json":
			a.json = true
		case name == "-h" || name == "--help" || name == "-V" || name == "--version":
			a.info = true
		case codexValue.has(name):
			if !hasValue {
				i++
			}
		case strings.HasPrefix(arg, "-"):
		default:
			words++
			switch {
			case words == 1 && !a.exec && (arg == "exec" || arg == "e"):
				a.exec, words = true, 0
			case words == 1 && arg == "resume":
				a.resume, words = true, 0
			case words == 1 && arg == "fork":
				a.fork, words = true, 0
			case words == 1 && arg == "review":
				a.review = true
			case words == 1 && !a.exec && !a.resume && !a.fork && codexNoSession.has(arg):
				a.info = true
				return a
			case words == 1 && (a.resume || a.fork) && a.id == "":
				a.id, a.idAt = arg, i
			}
		}
	}
	return a
}

// codex reads codex's command line (docs/spec.md §4.3).
func codex(argv []string, env Env) Plan {
	a := parseCodex(argv)
	p := Plan{Argv: argv, Mode: ModeInteractive}
	if a.exec {
		p.Mode = ModePrint
		if a.json {
			p.Mode = ModeJSON
		}
	}
	if a.info || a.ephemeral {
		p.Mode = ""
		return p
	}
	home := env.Getenv("CODEX_HOME")
	if home == "" {
		home = filepath.Join(env.Home, ".codex")
	}
	sessions := filepath.Join(abs(home, env), "sessions")
	watch := Watch{Dir: sessions, Depth: 3, Pattern: "rollout-*.jsonl"}
	switch {
	case a.resume && a.id != "" && !a.last:
		days, _ := filepath.Glob(filepath.Join(sessions, "*", "*", "*")) // YYYY/MM/DD
		f := newest(days, "rollout-*.jsonl", func(path string) bool {
			return strings.HasSuffix(filepath.Base(path), "-"+a.id+".jsonl")
		})
		if f == "" {
			p.Unknown = "no rollout file ends in -" + a.id + ".jsonl"
			return p
		}
		p.Files, p.SessionID = []string{f}, a.id
	case a.resume && a.last:
		// codex ranks --last by its own state database (state_*.sqlite
		// under CODEX_HOME, falling back to its rollout listing), not by
		// mtime: padrun cannot name its pick, and leaves argv alone.
		p.Unknown = "--last picks by codex's own state database"
		return p
	case a.resume:
		p.Unknown = "resume without a session id opens a picker"
		return p
	}
	p.Watch = []Watch{watch} // a new session, a fork, or a resume that writes anew
	return p
}

// codexHeaderID reads codex's header line:
// {"type":"session_meta","payload":{"id":ID,...}}.
func codexHeaderID(head *json.Decoder) (string, bool) {
	var h struct {
		Type    string `json:"type"`
		Payload struct {
			ID string `json:"id"`
		} `json:"payload"`
	}
	if head.Decode(&h) != nil || h.Type != "session_meta" {
		return "", false
	}
	return h.Payload.ID, true
}
