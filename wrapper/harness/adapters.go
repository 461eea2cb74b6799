package harness

import (
	_ "embed"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// controlJS opens every companion script: how it reaches padrun's control
// socket.
//
//go:embed companion/control.js
var controlJS []byte

// piExtension is the companion padrun loads into pi (docs/spec.md §4.5).
//
//go:embed companion/pi.js
var piJS []byte

// opencodePlugin is the companion padrun loads into opencode and kilo
// (docs/spec.md §4.7).
//
//go:embed companion/opencode.js
var opencodeJS []byte

// The companions, each put together at its first use.
var (
	piExtension    = sync.OnceValue(func() []byte { return slices.Concat(controlJS, []byte("\n"), piJS) })
	opencodePlugin = sync.OnceValue(func() []byte { return slices.Concat(controlJS, []byte("\n"), opencodeJS) })
)

// adapters are the harnesses padrun knows, in the order people read them,
// None last.
var adapters = []Adapter{
	{
		Name: "pi", Agent: "pi", read: pi, header: piHeaderID,
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
		// pi 0.74 and 1.6 set process.title = "pi" (dist/cli.js), which
		// overwrites the arguments in /proc/PID/cmdline.
		ErasesArgv: true,
	},
	{
		Name: "omp", Agent: "omp", read: omp, header: ompHeaderID,
		Env: []EnvVar{
			{"PI_CODING_AGENT_DIR", "omp's agent folder (default ~/.omp/agent)"},
			{"PI_CODING_AGENT_SESSION_DIR", "omp's session folder"},
			{"PI_CONFIG_DIR", "omp's folder below the home (default .omp)"},
			{"OMP_PROFILE", "omp's profile, whose agent folder is ~/.omp/profiles/<name>/agent"},
			{"PI_PROFILE", "omp's profile, read after $OMP_PROFILE"},
			{"XDG_DATA_HOME", "the data folder: omp keeps its sessions in $XDG_DATA_HOME/omp when that folder exists"},
			{"TMPDIR", "the temp folder (default /tmp): omp names a project's session folder below it -tmp-<path>"},
		},
		Sessions: Sessions{
			Folder:  "--session-dir, $PI_CODING_AGENT_SESSION_DIR, else <agentDir or $XDG_DATA_HOME/omp>/sessions/<enc(cwd)>/",
			Pattern: "*.jsonl",
			Ranking: "-c, an id, the picker: omp's own (its terminal breadcrumb, its listing), claimed by the companion at session_start",
		},
		Packages: []string{"@oh-my-pi/pi-coding-agent"},
		Oldest:   "18.1.17", Newest: "18.2.3",
		// pi's extension: omp runs pi's -e extensions and their
		// session_start and session_before_switch handlers.
		Companion: &CompanionSpec{
			LoadedBy: "-e", CanCancel: true,
			Script: piExtension, ScriptName: "pi-companion",
			load:   func(argv []string, l Load) ([]string, bool) { return WithPiCompanion(argv, l.Script), true },
			wanted: ompCompanionWanted,
		},
		// omp sets process.title = "omp" (src/cli.ts), but bun leaves
		// /proc/PID/cmdline as it was: its argv stays readable.
		Held: func(f string) string { return "fork it instead (omp --fork " + f + ")" },
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
			LoadedBy: "--settings", Hook: "companion claude-hook", runHook: claudeHook,
			load:     func(argv []string, l Load) ([]string, bool) { return WithClaudeCompanion(argv, l.Hook) },
			wanted:   claudeCompanionWanted,
			Conflict: "claude is given --settings of its own: padrun cannot add its hooks",
		},
		Records: claudeLiveRecords,
		// --fork-session only reads the source (claude.go).
		Held: func(f string) string {
			return "fork it instead (claude -r " + strings.TrimSuffix(strings.TrimRight(filepath.Base(f), "'"), ".jsonl") + " --fork-session)"
		},
	},
	{
		Name: "codex", Agent: "codex", read: codex, header: codexHeaderID,
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
		Name: "gemini", Agent: "gemini", read: gemini, header: geminiHeaderID,
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
			HookArgs: []string{"EVENT"}, runHook: geminiHook,
			SettingsEnv: "GEMINI_CLI_SYSTEM_DEFAULTS_PATH",
			settings:    geminiHooks, occupied: geminiDefaultsOccupied,
			load:   func(argv []string, l Load) ([]string, bool) { return argv, geminiReads(l) },
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
		Companion: &CompanionSpec{
			// qwen has no flag for settings: its system defaults file,
			// the lowest of its scopes, carries padrun's hooks, which it
			// adds to the user's. SessionStart cannot cancel: a refused
			// claim ends qwen.
			LoadedBy: "QWEN_CODE_SYSTEM_DEFAULTS_PATH", Hook: "companion qwen-hook", runHook: claudeHook,
			SettingsEnv: "QWEN_CODE_SYSTEM_DEFAULTS_PATH",
			settings:    qwenHookSettings, occupied: qwenDefaultsOccupied,
			load:     func(argv []string, _ Load) ([]string, bool) { return argv, true },
			wanted:   func(p Plan) bool { return p.Mode != "" },
			Conflict: "qwen has a system defaults file of its own (QWEN_CODE_SYSTEM_DEFAULTS_PATH): padrun cannot add its hooks",
		},
	},
	{
		Name: "copilot", Agent: "copilot", read: copilot,
		Env: []EnvVar{
			{"COPILOT_HOME", "Copilot CLI's folder (default ~/.copilot)"},
			// Where copilot's launcher finds the release it runs (copilotrelease.go).
			{"COPILOT_CACHE_HOME", "Copilot CLI's package cache, whose newest release its launcher runs"},
			{"COPILOT_PKG_CACHE_HOME", "Copilot CLI's package cache, read before $COPILOT_CACHE_HOME"},
			{"XDG_CACHE_HOME", "the cache folder (default ~/.cache), holding Copilot CLI's package cache"},
			{"LOCALAPPDATA", "the cache folder on Windows, holding Copilot CLI's package cache"},
			{"COPILOT_AUTO_UPDATE", "turns Copilot CLI's auto-update off: its launcher runs its own release"},
			{"COPILOT_CLI_DIST_DIR", "a Copilot CLI build its launcher runs instead"},
		},
		Sessions: Sessions{
			Folder:  "$COPILOT_HOME (else ~/.copilot)/session-state/<id>/",
			Pattern: "events.jsonl", Depth: 1,
			Ranking: "--continue, names, prefixes: copilot's own database, which padrun cannot read (the one session there is, else unknown)",
		},
		Packages: []string{"@github/copilot"},
		Oldest:   "1.0.40", Newest: "1.0.102",
		release: copilotRelease,
		InUse:   copilotInUse,
		// Its hooks run once copilot has opened the session: sessionStart's
		// output cannot refuse, and userPromptSubmitted's block (1.0.102)
		// comes after session.resume and hook.start are written or queued
		// (copilot flushes its events 100 ms after the last, 1.0.40's app.js).
		// Where padrun watches its in-use locks (Plan.InUseClaims) the switch
		// is claimed instead, and this is not said.
		Unvetoed: "copilot's in-app /resume switches sessions before any hook padrun could refuse it from runs: " +
			"a session opened so is guarded by the registry record only",
	},
	{
		Name: "droid", Agent: "droid", read: droid,
		Env: []EnvVar{
			{"FACTORY_HOME_OVERRIDE", "Factory droid's home, holding .factory (default ~)"},
			{"FACTORY_ENV", "Factory droid's environment: another than production moves its folder"},
		},
		Sessions: Sessions{
			Folder:  "$FACTORY_HOME_OVERRIDE (else ~)/.factory/sessions/<enc(cwd)>/",
			Pattern: "*.jsonl",
			Ranking: "--last: droid's own session index, which padrun does not read (its companion claims the session droid opens)",
		},
		Packages: []string{"@factory/cli", "@factory/cli-linux-x64"},
		Oldest:   "0.215.0", Newest: "0.225.2",
		Companion: &CompanionSpec{
			// Its settings file is a path (--settings FILE): padrun writes
			// it into its control folder. SessionStart cannot cancel: a
			// refused claim ends droid before it writes.
			LoadedBy: "--settings", Hook: "companion droid-hook", runHook: claudeHook,
			settings: droidHookSettings,
			load:     func(argv []string, l Load) ([]string, bool) { return WithDroidCompanion(argv, l.Settings) },
			wanted:   func(p Plan) bool { return p.Mode != "" },
			Conflict: "droid is given --settings of its own: padrun cannot add its hooks",
		},
		// --fork only reads the source (droid.go).
		Held: func(f string) string {
			return "fork it instead (droid --fork " + strings.TrimSuffix(strings.TrimRight(filepath.Base(f), "'"), ".jsonl") + ")"
		},
	},
	dbAdapter(opencodeNames, "opencode", []string{"opencode-ai"}, "1.17.19", "1.18.33"),
	dbAdapter(kiloNames, "kilo", []string{"@kilocode/cli", "@kilocode/cli-linux-x64"}, "7.7.7", "7.7.9"),
	{
		Name: "cline", Agent: "cline", read: cline,
		Env: []EnvVar{
			{"CLINE_DIR", "Cline CLI's folder (default ~/.cline)"},
			{"CLINE_DATA_DIR", "Cline CLI's data folder (default $CLINE_DIR/data)"},
			{"CLINE_SESSION_DATA_DIR", "Cline CLI's session folder (default $CLINE_DATA_DIR/sessions)"},
			{"CLINE_SANDBOX", "1: Cline CLI keeps its data in its sandbox folder, as with --data-dir"},
			{"CLINE_SANDBOX_DATA_DIR", "Cline CLI's sandbox folder (default $TMPDIR/cline-sandbox)"},
			{"TMPDIR", "the temporary folder, holding Cline CLI's default sandbox folder"},
		},
		Sessions: Sessions{
			Folder:  "--data-dir (else $CLINE_SESSION_DATA_DIR, else $CLINE_DATA_DIR, else ~/.cline/data)/sessions/<id>/",
			Pattern: "*.messages.json", Depth: 1,
			Ranking: "none: cline resumes only by --id",
		},
		Packages: []string{"cline"},
		Oldest:   "3.0.57", Newest: "3.0.65",
		// Its hook files cannot veto a turn, and a plugin's beforeRun
		// stops the model call after the prompt is written (3.0.65).
		Unvetoed: "cline's in-app /history and /fork open another session with no hook padrun could refuse them from: " +
			"a session opened so is guarded by the registry record only",
	},
	{
		Name: None, read: func(argv []string, _ Env) Plan { return Plan{Harness: None, Argv: argv} },
	},
}

// dbAdapter is opencode's adapter under h's names: kilo is opencode's fork.
func dbAdapter(h dbHarness, agent string, packages []string, oldest, newest string) Adapter {
	return Adapter{
		Name: h.name, Agent: agent, read: h.read,
		Env: []EnvVar{
			{h.dbVar, h.name + "'s session database (default $XDG_DATA_HOME/" + h.name + "/" + h.dbName + ")"},
			{h.content, h.name + "'s inline config, to which padrun adds its plugin"},
			{h.pure, h.name + " without external plugins: its companion cannot load"},
			{"XDG_DATA_HOME", "the data folder of opencode and kilo (default ~/.local/share)"},
		},
		Sessions: Sessions{
			Folder:   "sessions are rows of $" + h.dbVar + " (else $XDG_DATA_HOME/" + h.name + "/" + h.dbName + "); padrun holds each in <dbdir>/." + h.dbName + ".padrun/<id>",
			Pattern:  "ses_*",
			Ranking:  "-c: the project's first root session, in " + h.name + "'s database: claimed by the companion when the turn starts",
			Database: true,
		},
		Packages: packages,
		Oldest:   oldest, Newest: newest,
		Companion: &CompanionSpec{
			LoadedBy: "$" + h.content, CanCancel: true,
			Script: opencodePlugin, ScriptName: h.name + "-companion",
			load:     func(argv []string, _ Load) ([]string, bool) { return argv, true },
			env:      h.companionEnv,
			wanted:   h.companionWanted,
			Conflict: h.name + " is given $" + h.content + " that is not a JSON object padrun can add its plugin to",
		},
		Held: func(f string) string {
			return "fork it instead (" + h.name + " run --fork -s " + strings.TrimRight(filepath.Base(f), "'") + " ...)"
		},
	}
}

// words is a set of command-line words (flags, subcommands), kept as
// static data: a map literal is built at the package's init, on every
// run of padrun, harness or not.
type words []string

func (w words) has(s string) bool { return slices.Contains(w, s) }
