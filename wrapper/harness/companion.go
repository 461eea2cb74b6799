package harness

import (
	"encoding/json"
	"slices"
	"strings"
)

// Companion names the companion a run of this harness can load (SPEC 4.5):
// "pi" or "claude"; empty when the harness has none or the run opens no
// session (help, package commands).
func Companion(p Plan) string {
	switch {
	case p.Harness == "pi" && len(p.Argv) > 0 && !parsePi(p.Argv).info:
		return "pi"
	case p.Harness == "claude" && p.Mode != "" && !parseClaude(p.Argv).background:
		// --bg: claude's daemon runs the session after padrun has gone; a
		// hook there could reach no padrun, and argv stays untouched.
		return "claude"
	}
	return ""
}

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
	hook := []map[string]any{{"hooks": []map[string]any{{"type": "command", "command": hookCmd}}}}
	b, _ := json.Marshal(map[string]any{"hooks": map[string]any{"SessionStart": hook}})
	return slices.Concat(argv[:1], []string{"--settings", string(b)}, argv[1:]), true
}

// ShellQuote quotes s for a POSIX shell when it needs it.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
