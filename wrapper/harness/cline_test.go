package harness

import (
	"path/filepath"
	"slices"
	"testing"
)

func TestCline(t *testing.T) {
	vars := map[string]string{}
	env := Env{Getenv: func(k string) string { return vars[k] }, Cwd: "/w/proj", Home: "/h", StdinTTY: true}
	files := func(sessions, id string) []string {
		return []string{filepath.Join(sessions, id, id+".messages.json"), filepath.Join(sessions, id, id+".json")}
	}
	home := "/h/.cline/data/sessions"
	tests := []struct {
		name    string
		vars    map[string]string
		argv    []string
		files   []string
		mode    string
		watch   string // the watched sessions folder; empty: none
		unknown bool
	}{
		{name: "id", argv: []string{"cline", "--id", "1_abcde"}, files: files(home, "1_abcde"), mode: ModeInteractive, watch: home},
		{name: "id inline, prompt dropped", argv: []string{"cline", "--id=1_abcde", "fix it now"}, files: files(home, "1_abcde"), mode: ModeInteractive, watch: home},
		{name: "data dir against cwd", argv: []string{"cline", "--data-dir", "dd", "--id", "S"}, files: files("/w/proj/dd/sessions", "S"), mode: ModeInteractive, watch: "/w/proj/dd/sessions"},
		{name: "data dir against --cwd", argv: []string{"cline", "-c", "sub", "--data-dir", "dd", "--id", "S"}, files: files("/w/proj/sub/dd/sessions", "S"), mode: ModeInteractive, watch: "/w/proj/sub/dd/sessions"},
		{name: "sandbox default", vars: map[string]string{"CLINE_SANDBOX": "1", "TMPDIR": "/t"}, argv: []string{"cline", "--id", "S"}, files: files("/t/cline-sandbox/sessions", "S"), mode: ModeInteractive, watch: "/t/cline-sandbox/sessions"},
		{name: "session dir var", vars: map[string]string{"CLINE_SESSION_DATA_DIR": "/s", "CLINE_DATA_DIR": "/d"}, argv: []string{"cline", "--id", "S"}, files: files("/s", "S"), mode: ModeInteractive, watch: "/s"},
		{name: "data dir var", vars: map[string]string{"CLINE_DATA_DIR": "/d", "CLINE_DIR": "/c"}, argv: []string{"cline", "--id", "S"}, files: files("/d/sessions", "S"), mode: ModeInteractive, watch: "/d/sessions"},
		{name: "config after the prompt", vars: map[string]string{"CLINE_DIR": "/c"}, argv: []string{"cline", "-m", "x", "say hi now", "--config", "/k"}, mode: ModePrint, watch: "/k/data/sessions"},
		{name: "cline dir", vars: map[string]string{"CLINE_DIR": "/c"}, argv: []string{"cline", "say hi now"}, mode: ModePrint, watch: "/c/data/sessions"},
		{name: "value flag takes a dash word", argv: []string{"cline", "-s", "--id", "hello there"}, mode: ModePrint, watch: home},
		{name: "short flags together", argv: []string{"cline", "-pi"}, mode: ModeInteractive, watch: home},
		{name: "short value joined", argv: []string{"cline", "-vcsub", "--data-dir", "dd", "hello there"}, mode: ModePrint, watch: "/w/proj/sub/dd/sessions"},
		{name: "thinking bare", argv: []string{"cline", "--thinking", "--json", "hello there"}, mode: ModeJSON, watch: home},
		{name: "thinking value", argv: []string{"cline", "--thinking", "high"}, mode: ModeInteractive, watch: home},
		{name: "auto-approve bare", argv: []string{"cline", "--auto-approve", "hello there"}, mode: ModePrint, watch: home},
		{name: "tui", argv: []string{"cline"}, mode: ModeInteractive, watch: home},
		{name: "acp", argv: []string{"cline", "--acp"}, mode: ModeRPC, watch: home, unknown: true},
		{name: "zen", argv: []string{"cline", "-z", "hello there"}, mode: ModePrint, unknown: true},
		{name: "history picker", argv: []string{"cline", "history"}, mode: ModeInteractive, watch: home, unknown: true},
		{name: "config view", argv: []string{"cline", "--data-dir", "dd", "config"}, mode: ModeInteractive, watch: "/w/proj/dd/sessions"},
		{name: "auth", argv: []string{"cline", "auth", "--data-dir", "dd"}},
		{name: "a prompt named like a command", argv: []string{"cline", "fix this", "auth"}, mode: ModePrint, watch: home},
		{name: "version", argv: []string{"cline", "-V", "--id", "S"}},
		{name: "unknown option", argv: []string{"cline", "--bogus", "--id", "S"}},
		{name: "missing value", argv: []string{"cline", "--id"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clear(vars)
			for k, v := range tt.vars {
				vars[k] = v
			}
			p := cline(tt.argv, env)
			if !slices.Equal(p.Files, tt.files) || p.Mode != tt.mode || (p.Unknown != "") != tt.unknown {
				t.Errorf("files %q mode %q unknown %q, want %q %q %v", p.Files, p.Mode, p.Unknown, tt.files, tt.mode, tt.unknown)
			}
			if !slices.Equal(p.Argv, tt.argv) {
				t.Errorf("argv %q changed", p.Argv)
			}
			watch := ""
			if len(p.Watch) == 1 {
				watch = p.Watch[0].Dir
			}
			if watch != tt.watch {
				t.Errorf("watch %q, want %q", watch, tt.watch)
			}
		})
	}
	env.StdinTTY = false
	if p := cline([]string{"cline", "history"}, env); p.Mode != "" || p.Watch != nil {
		t.Errorf("history without a terminal: mode %q watch %v, want none", p.Mode, p.Watch)
	}
	if p := cline([]string{"cline"}, env); p.Mode != ModePrint {
		t.Errorf("piped stdin: mode %q, want print", p.Mode)
	}
}

// cline's record of a session's writer is <id>.json beside
// <id>.messages.json; neither a messages file nor a guard file is a record.
func TestClineWatch_RecordBesideTheMessages(t *testing.T) {
	w := cline([]string{"cline", "hello there"}, Env{Getenv: func(string) string { return "" }, Cwd: "/w", Home: "/h"}).Watch[0]
	for _, c := range []struct{ name, record, session string }{
		{"1796_ab.messages.json", "1796_ab.json", ""},
		{"1796_ab.json", "", "1796_ab.messages.json"},
		{".json", "", ""},
		{"notes.txt", "", ""},
	} {
		if got := w.RecordOf(c.name); got != c.record {
			t.Errorf("RecordOf(%q) = %q, want %q", c.name, got, c.record)
		}
		if got := w.SessionOf(c.name); got != c.session {
			t.Errorf("SessionOf(%q) = %q, want %q", c.name, got, c.session)
		}
	}
	if (Watch{Pattern: "*.jsonl"}).RecordOf("s.jsonl") != "" {
		t.Error("a watch with no Record names a record")
	}
}
