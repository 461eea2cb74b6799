package harness

import (
	_ "embed"
)

// piExtension is the companion padrun loads into pi (SPEC 4.5).
//
//go:embed companion/pi.js
var piExtension []byte

// adapters are the harnesses padrun knows, in the order people read them,
// None last.
var adapters = []Adapter{
	{
		Name: "pi", Agent: "pi", read: pi,
		Env: []EnvVar{
			{"PI_CODING_AGENT_DIR", "pi's folder (default ~/.pi/agent)"},
			{"PI_CODING_AGENT_SESSION_DIR", "pi's session folder"},
		},
		Sessions: Sessions{
			Folder:  "--session-dir, $PI_CODING_AGENT_SESSION_DIR, sessionDir in settings.json, else <agentDir>/sessions/<enc(cwd)>/",
			Pattern: "*.jsonl",
			Ranking: "-c: the newest by mtime; an id prefix: by last activity (pirank.go)",
		},
		Packages: []string{"@earendil-works/pi-coding-agent", "@mariozechner/pi-coding-agent"},
		Oldest:   "0.74.2", Newest: "1.6.0",
		Companion: &CompanionSpec{
			LoadedBy: "-e", CanCancel: true,
			Script: piExtension, ScriptName: "pi-companion",
			load:   func(argv []string, l Load) ([]string, bool) { return WithPiCompanion(argv, l.Script), true },
			wanted: piCompanionWanted,
		},
		Held: func(f string) string { return "fork it instead (pi --fork " + f + ")" },
	},
	{
		Name: "claude", Agent: "claude-code", read: claude,
		Env: []EnvVar{{"CLAUDE_CONFIG_DIR", "Claude Code's folder (default ~/.claude)"}},
		Sessions: Sessions{
			Folder:  "$CLAUDE_CONFIG_DIR (else ~/.claude)/projects/<enc(cwd)>/",
			Pattern: "*.jsonl",
			Ranking: "-c: the newest by mtime; -p -r TITLE: by title (claudetitle.go)",
		},
		Packages: []string{"@anthropic-ai/claude-code"},
		Oldest:   "2.1.197", Newest: "2.1.332",
		Companion: &CompanionSpec{
			// A SessionStart hook cannot cancel: a refused claim ends claude.
			LoadedBy: "--settings", Hook: "companion claude-hook",
			load:     func(argv []string, l Load) ([]string, bool) { return WithClaudeCompanion(argv, l.Hook) },
			wanted:   claudeCompanionWanted,
			Conflict: "claude is given --settings of its own: padrun cannot add its hooks",
		},
	},
	{
		Name: "codex", Agent: "codex", read: codex,
		Env: []EnvVar{{"CODEX_HOME", "codex's folder (default ~/.codex)"}},
		Sessions: Sessions{
			Folder:  "$CODEX_HOME (else ~/.codex)/sessions/YYYY/MM/DD/",
			Pattern: "rollout-*.jsonl", Depth: 3,
			Ranking: "resume --last: codex's own state database, which padrun cannot read",
		},
		Packages: []string{"@openai/codex"},
		Oldest:   "0.171.0", Newest: "0.171.0",
	},
	{
		Name: "gemini", Agent: "gemini", read: gemini,
		Env: []EnvVar{
			{"GEMINI_CLI_HOME", "Gemini CLI's home, holding .gemini (default ~)"},
			{"GEMINI_CLI_SYSTEM_DEFAULTS_PATH", "Gemini CLI's system-defaults file, where padrun loads its hooks from: one of yours leaves them out"},
			{"GEMINI_CLI_SYSTEM_SETTINGS_PATH", "Gemini CLI's system settings file, beside which it finds system-defaults.json"},
		},
		Sessions: Sessions{
			Folder:  "$GEMINI_CLI_HOME (else ~)/.gemini/tmp/<slug of the cwd in projects.json>/chats/",
			Pattern: "session-*.jsonl", Depth: 2,
			Ranking: "-r latest: the newest startTime of the listed sessions; -r N: the N-th by startTime (gemini.go)",
		},
		Packages: []string{"@google/gemini-cli"},
		Oldest:   "0.43.0", Newest: "0.61.0",
		// Its listing and cleanup read every chats/session-*.json*.
		HiddenMarkers: []string{"session-*.json", "session-*.jsonl"},
		// /resume inside gemini runs no hook: it appends its metadata to
		// the session it opens ($set lines) before padrun's BeforeAgent hook
		// sees the next turn and ends gemini if another session holds it.
		Unvetoed: "gemini's in-app /resume runs no hook: gemini writes to the session it opens before padrun can refuse it " +
			"(with padrun's hooks loaded, gemini is ended at the next turn if another session holds that file; else the session is guarded by the registry record only)",
		Companion: &CompanionSpec{
			// BeforeAgent could block the turn, but gemini's TUI records the
			// block as a warning in the session file: a refused claim ends
			// gemini instead.
			LoadedBy: "GEMINI_CLI_SYSTEM_DEFAULTS_PATH", Hook: "companion gemini-hook",
			ScriptName: "gemini-hooks", Settings: geminiHooks,
			load:   func(argv []string, l Load) ([]string, bool) { return argv, geminiLoad(l) },
			env:    func(l Load) []string { return []string{"GEMINI_CLI_SYSTEM_DEFAULTS_PATH=" + l.Script} },
			wanted: geminiCompanionWanted,
			Conflict: "gemini reads padrun's hooks only from a system-defaults file, and either one of yours is set " +
				"or gemini 0.61 and later read it only from folders that root alone may write",
			QuietIn: []string{ModePrint, ModeJSON},
		},
	},
	{
		Name: "qwen", Agent: "qwen-code", read: qwen,
		Env: []EnvVar{
			{"QWEN_HOME", "Qwen Code's folder (default ~/.qwen)"},
			{"QWEN_RUNTIME_DIR", "Qwen Code's session folder's base (default $QWEN_HOME)"},
		},
		Sessions: Sessions{
			Folder:  "$QWEN_RUNTIME_DIR (else $QWEN_HOME, else ~/.qwen)/projects/<enc(cwd)>/chats/",
			Pattern: "*.jsonl",
			Ranking: "-c: the newest by mtime whose first record's cwd is this project (qwen.go)",
		},
		Packages: []string{"@qwen-code/qwen-code"},
		Oldest:   "0.21.2", Newest: "0.24.4",
	},
	{
		Name: "copilot", Agent: "copilot", read: copilot,
		Env: []EnvVar{{"COPILOT_HOME", "Copilot CLI's folder (default ~/.copilot)"}},
		Sessions: Sessions{
			Folder:  "$COPILOT_HOME (else ~/.copilot)/session-state/<id>/",
			Pattern: "events.jsonl", Depth: 1,
			Ranking: "--continue, names, prefixes: copilot's own database, which padrun cannot read (the one session there is, else unknown)",
		},
		Packages: []string{"@github/copilot"},
		Oldest:   "1.0.40", Newest: "1.0.102",
	},
	{
		Name: None, read: func(argv []string, _ Env) Plan { return Plan{Harness: None, Argv: argv} },
	},
}
