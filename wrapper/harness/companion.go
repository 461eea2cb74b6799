package harness

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/padrun/padrun/wrapper/hook"
)

// CompanionSpec is what a harness loads of padrun's (docs/spec.md §4.5): a script it
// runs in its own process, or a hook that runs padrun again.
type CompanionSpec struct {
	// LoadedBy is the flag that asks the harness to load it, named when
	// the companion never greets.
	LoadedBy string
	// CanCancel: the companion cancels a switch into a held session (pi's
	// session_before_switch); else a refused claim ends the harness.
	CanCancel bool
	// Script, when set, gives the script written into padrun's control
	// folder as ScriptName-VERSION-HASH.js and loaded from there.
	Script     func() []byte
	ScriptName string
	// Hook, when set, is the padrun command line (after padrun's own path)
	// the harness's hooks run: "companion SIDE", to which they add
	// HookArgs (gemini's EVENT); runHook answers them (HookSides).
	Hook     string
	HookArgs []string
	runHook  func(HookCall) int
	// Conflict is the warning when argv leaves no room to load the
	// companion (claude's own --settings), or the settings file it would
	// take the place of exists (qwen's system defaults).
	Conflict string
	// SettingsEnv, when set, is the variable that names a settings file of
	// the harness's own: padrun writes settings(hook) into its control
	// folder as HARNESS-settings-VERSION-HASH.json and points the variable
	// at it. settings without SettingsEnv: the file is written all the
	// same, and Load.Settings names it to load (droid's --settings FILE).
	SettingsEnv string
	settings    func(hook string) []byte
	// occupied reports whether the settings file SettingsEnv would replace
	// exists (getenv is the child's environment): then the companion does
	// not load, and padrun says Conflict.
	occupied func(getenv func(string) string) bool
	// QuietIn are the modes where a companion that cannot load is said at
	// debug level only: it guards no switch there.
	QuietIn []string
	load    func(argv []string, l Load) ([]string, bool)
	// env, when set, loads it by the child's environment too (opencode's
	// inline config); ok is false as for load.
	env    func(l Load) ([]string, bool)
	wanted func(p Plan) bool // whether this run loads it
}

// Settings returns the settings file that loads the hook command hook, and
// the variable that names it: nil when the harness takes no such file, ""
// when argv names it (droid's --settings FILE, Load.Settings).
func (c *CompanionSpec) Settings(hook string) (env string, b []byte) {
	if c.settings == nil {
		return "", nil
	}
	return c.SettingsEnv, c.settings(hook)
}

// Occupied reports whether the settings file the companion would take the
// place of exists, so that loading it would hide the user's.
func (c *CompanionSpec) Occupied(getenv func(string) string) bool {
	return c.occupied != nil && c.occupied(getenv)
}

// Load is what loads a companion: the script's (or settings file's) path,
// once written, the hook's shell command, and what the run knows of the
// harness.
type Load struct {
	Script, Hook string
	Getenv       func(string) string // the environment the child inherits
	Version      string              // the harness's release; empty when unknown
	// Settings is the path of the settings file written for SettingsEnv,
	// once written.
	Settings string
}

// Argv returns argv with the companion loaded; ok is false when the
// companion cannot be loaded into it (see Conflict).
func (c *CompanionSpec) Argv(argv []string, l Load) (out []string, ok bool) {
	launcher, args := harnessArgs(argv)
	out, ok = c.load(args, l)
	return slices.Concat(launcher, out), ok
}

// Env returns the variables that load the companion, beside Argv's; ok is
// false when the companion cannot be loaded so (see Conflict).
func (c *CompanionSpec) Env(l Load) (env []string, ok bool) {
	if c.env == nil {
		return nil, true
	}
	if l.Getenv == nil {
		l.Getenv = func(string) string { return "" }
	}
	return c.env(l)
}

// Companion names the harness whose companion a run loads (docs/spec.md §4.5);
// empty when the harness has none or the run opens no session (help,
// package commands).
func Companion(p Plan) string {
	if CompanionOf(p) == nil {
		return ""
	}
	return p.Harness
}

// CompanionOf is the companion a run loads; nil when Companion is empty.
func CompanionOf(p Plan) *CompanionSpec {
	_, p.Argv = harnessArgs(p.Argv)
	if a, ok := Lookup(p.Harness); ok && a.Companion != nil && a.Companion.wanted(p) {
		c := *a.Companion
		return &c
	}
	return nil
}

func piCompanionWanted(p Plan) bool { return len(p.Argv) > 0 && !parsePi(p.Argv).info }

func geminiCompanionWanted(p Plan) bool { return p.Mode != "" }

// --bg: claude's daemon runs the session after padrun has gone; a hook
// there could reach no padrun, and argv stays untouched.
func claudeCompanionWanted(p Plan) bool { return p.Mode != "" && !parseClaude(p.Argv).background }

// WithPiCompanion returns pi's argv with the extension at path loaded
// first: explicit -e paths load even under --no-extensions.
func WithPiCompanion(argv []string, path string) []string {
	return slices.Concat(argv[:1], []string{"-e", path}, argv[1:])
}

// WithClaudeCompanion returns claude's argv with hooks that run hookCmd
// (a shell command) at SessionStart, passed with --settings, which claude
// adds to the user's settings. ok is false when argv has a --settings of its
// own: claude would keep only one of the two.
func WithClaudeCompanion(argv []string, hookCmd string) (out []string, ok bool) {
	for _, a := range argv[1:] {
		if a == "--" {
			break
		}
		if a == "--settings" || strings.HasPrefix(a, "--settings=") {
			return argv, false
		}
	}
	return slices.Concat(argv[:1], []string{"--settings", string(hookSettings(hookCmd, "SessionStart"))}, argv[1:]), true
}

// hookSettings is a settings object, in claude's hooks schema (which qwen
// shares), that runs hookCmd at each of events.
func hookSettings(hookCmd string, events ...string) []byte {
	hooks := map[string]any{}
	for _, e := range events {
		hooks[e] = []map[string]any{{"hooks": []map[string]any{{"type": "command", "command": hookCmd}}}}
	}
	b, _ := json.Marshal(map[string]any{"hooks": hooks})
	return b
}

// claudeHook answers the hooks of claude's schema (claude's, qwen's and
// droid's): `padrun companion HARNESS-hook`.
func claudeHook(c HookCall) int {
	return hook.Claude(c.Harness, c.Stdin, c.Stderr, c.Control)
}

// geminiHook answers gemini's hooks: `padrun companion gemini-hook EVENT`.
func geminiHook(c HookCall) int {
	return hook.Gemini(c.Args[0], c.Stdin, c.Stdout, c.Stderr, c.Control)
}

// ShellQuote quotes s for a POSIX shell when it needs it.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
