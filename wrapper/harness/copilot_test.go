package harness

import (
	"os"
	"path/filepath"
	"testing"
)

const (
	copilotA = "88888888-8888-4888-8888-888888888888"
	copilotB = "99999999-9999-4999-8999-999999999999"
)

// TestCopilot: a full id is guarded; --continue is pinned to the one
// session there is and unknown among several (copilot ranks them in its
// database); prefixes, names and the picker are unknown.
func TestCopilot(t *testing.T) {
	home := t.TempDir()
	state := filepath.Join(home, ".copilot", "session-state")
	os.MkdirAll(filepath.Join(state, copilotA), 0o700)
	os.MkdirAll(filepath.Join(state, ".session-operation-locks"), 0o700)
	env := Env{Getenv: func(string) string { return "" }, Cwd: "/w/proj", Home: home}
	file := func(id string) string { return filepath.Join(state, id, "events.jsonl") }
	tests := []struct {
		name    string
		argv    []string
		files   []string
		argvOut []string
		mode    string
		unknown bool
		watch   bool
	}{
		{name: "continue the one session", argv: []string{"copilot", "--continue", "-p", "x"}, files: []string{file(copilotA)},
			argvOut: []string{"copilot", "--resume=" + copilotA, "-p", "x"}, mode: "print", watch: true},
		{name: "resume id", argv: []string{"copilot", "--resume", copilotA, "-p", "x"}, files: []string{file(copilotA)}, mode: "print", watch: true},
		{name: "resume =id", argv: []string{"copilot", "--resume=" + copilotA}, files: []string{file(copilotA)}, mode: "interactive", watch: true},
		{name: "new uuid", argv: []string{"copilot", "--session-id", copilotB, "-p", "x"}, files: []string{file(copilotB)}, mode: "print", watch: true},
		{name: "prefix", argv: []string{"copilot", "-r", "8888888", "-p", "x"}, unknown: true, mode: "print"},
		{name: "name", argv: []string{"copilot", "--resume=my feature"}, unknown: true, mode: "interactive"},
		{name: "picker", argv: []string{"copilot", "--resume", "-p", "x"}, unknown: true, mode: "print"},
		{name: "new", argv: []string{"copilot", "-p", "x"}, mode: "print", watch: true},
		{name: "json", argv: []string{"copilot", "-p", "x", "--output-format", "json"}, mode: "json", watch: true},
		{name: "acp", argv: []string{"copilot", "--acp"}, mode: "rpc", watch: true},
		{name: "list flag eats words", argv: []string{"copilot", "--allow-tool", "a", "b", "--continue"}, files: []string{file(copilotA)}, mode: "interactive", watch: true},
		{name: "subcommand", argv: []string{"copilot", "mcp", "list"}},
		{name: "version", argv: []string{"copilot", "--version"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Resolve("copilot", tt.argv, env)
			if err != nil {
				t.Fatal(err)
			}
			checkPlan(t, p, tt.files, tt.argvOut, tt.mode, "", tt.unknown, tt.watch, state, "")
		})
	}
	os.MkdirAll(filepath.Join(state, copilotB), 0o700)
	if p, _ := Resolve("copilot", []string{"copilot", "--continue", "-p", "x"}, env); p.Unknown == "" || len(p.Files) != 0 {
		t.Errorf("two sessions: plan %+v, want unknown (copilot ranks them in its database, not by mtime)", p)
	}
}
