package harness

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// geminiHomeFor lays out ~/.gemini with the cwd's slug and the sessions
// given, by file name.
func geminiHomeFor(t *testing.T, sessions map[string]string) (Env, string) {
	t.Helper()
	home, cwd := t.TempDir(), t.TempDir()
	chats := filepath.Join(home, ".gemini", "tmp", "proj", "chats")
	if err := os.MkdirAll(chats, 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(home, ".gemini", "projects.json"), []byte(`{"projects":{"`+cwd+`":"proj"}}`), 0o600)
	os.WriteFile(filepath.Join(home, ".gemini", "tmp", "proj", ".project_root"), []byte(cwd), 0o600)
	for name, body := range sessions {
		os.WriteFile(filepath.Join(chats, name), []byte(body), 0o600)
	}
	return Env{Cwd: cwd, Home: home, Getenv: func(string) string { return "" }, Now: time.Now(), Version: "0.61.0"}, chats
}

func geminiFile(id, start string, lines ...string) string {
	return `{"sessionId":"` + id + `","projectHash":"h","startTime":"` + start + `","lastUpdated":"` + start + `","kind":"main"}` + "\n" +
		strings.Join(lines, "\n") + "\n"
}

const (
	geminiAsk    = `{"id":"m1","type":"user","content":[{"text":"hello"}]}`
	geminiAnswer = `{"id":"m2","type":"gemini","content":"hi"}`
	geminiCmd    = `{"id":"m1","type":"user","content":[{"text":"/help"}]}`
)

// TestGemini_Rank: -r latest is the newest startTime among the listed
// sessions (not the newest file), -r N the N-th by startTime, -r UUID its
// own; an empty, a subagent's or an unparseable file is not listed; latest
// and N are pinned to the UUID.
func TestGemini_Rank(t *testing.T) {
	env, chats := geminiHomeFor(t, map[string]string{
		"session-2026-01-01T10-00-aaaaaaaa.jsonl": geminiFile("aaaaaaaa-1", "2026-01-01T10:00:00.000Z", geminiAsk, geminiAnswer),
		"session-2026-01-01T09-00-bbbbbbbb.jsonl": geminiFile("bbbbbbbb-2", "2026-01-01T11:00:00.000Z", geminiAsk),
		"session-2026-01-01T12-00-cccccccc.jsonl": geminiFile("cccccccc-3", "2026-01-01T12:00:00.000Z"),
		"session-2026-01-01T13-00-dddddddd.jsonl": strings.Replace(geminiFile("dddddddd-4", "2026-01-01T13:00:00.000Z", geminiAsk), `"main"`, `"subagent"`, 1),
		"session-2026-01-01T14-00-eeeeeeee.json":  "not json",
	})
	// The oldest-started file is the newest by mtime: gemini ranks by
	// startTime.
	later := time.Now().Add(time.Hour)
	os.Chtimes(filepath.Join(chats, "session-2026-01-01T10-00-aaaaaaaa.jsonl"), later, later)
	b := filepath.Join(chats, "session-2026-01-01T09-00-bbbbbbbb.jsonl")
	a := filepath.Join(chats, "session-2026-01-01T10-00-aaaaaaaa.jsonl")
	for _, tc := range []struct {
		argv     []string
		file, id string
		pinned   []string
	}{
		{[]string{"gemini", "-r", "latest", "-p", "x"}, b, "bbbbbbbb-2", []string{"gemini", "-r", "bbbbbbbb-2", "-p", "x"}},
		{[]string{"gemini", "-r", "-p", "x"}, b, "bbbbbbbb-2", []string{"gemini", "-r", "bbbbbbbb-2", "-p", "x"}},
		{[]string{"gemini", "-p", "x", "--resume"}, b, "bbbbbbbb-2", []string{"gemini", "-p", "x", "--resume", "bbbbbbbb-2"}},
		{[]string{"gemini", "--resume=latest"}, b, "bbbbbbbb-2", []string{"gemini", "--resume=bbbbbbbb-2"}},
		{[]string{"gemini", "-r", "1"}, a, "aaaaaaaa-1", []string{"gemini", "-r", "aaaaaaaa-1"}},
		{[]string{"gemini", "-r", "2"}, b, "bbbbbbbb-2", []string{"gemini", "-r", "bbbbbbbb-2"}},
		{[]string{"gemini", "-r", "aaaaaaaa-1"}, a, "aaaaaaaa-1", []string{"gemini", "-r", "aaaaaaaa-1"}},
		{[]string{"gemini", "-r", "3"}, "", "", []string{"gemini", "-r", "3"}},
		{[]string{"gemini", "-r", "cccccccc-3"}, "", "", []string{"gemini", "-r", "cccccccc-3"}},
	} {
		p := gemini(slices.Clone(tc.argv), env)
		if got := strings.Join(p.Files, ","); got != tc.file || p.SessionID != tc.id || !slices.Equal(p.Argv, tc.pinned) {
			t.Errorf("%q: files %q, id %q, argv %q; want %q, %q, %q", tc.argv, got, p.SessionID, p.Argv, tc.file, tc.id, tc.pinned)
		}
		if tc.file == "" && len(p.Watch) == 0 {
			t.Errorf("%q: no session found and no watch for the new one", tc.argv)
		}
	}
	env.NoPin = true
	if p := gemini([]string{"gemini", "-r", "latest"}, env); !slices.Equal(p.Argv, []string{"gemini", "-r", "latest"}) || len(p.Files) != 1 {
		t.Errorf("--no-pin: argv %q, files %q", p.Argv, p.Files)
	}
}

// TestGemini_Rank_Versions: 0.43 lists a session whose only message is a
// command, 0.61 does not (hasUserOrAssistantMessage, hasResumableContent).
func TestGemini_Rank_Versions(t *testing.T) {
	env, chats := geminiHomeFor(t, map[string]string{
		"session-2026-01-01T10-00-aaaaaaaa.jsonl": geminiFile("aaaaaaaa-1", "2026-01-01T10:00:00.000Z", geminiAsk),
		"session-2026-01-01T11-00-bbbbbbbb.jsonl": geminiFile("bbbbbbbb-2", "2026-01-01T11:00:00.000Z", geminiCmd),
	})
	for version, want := range map[string]string{"0.61.0": "aaaaaaaa", "0.43.0": "bbbbbbbb"} {
		env.Version = version
		p := gemini([]string{"gemini", "-r", "latest", "-p", "x"}, env)
		if len(p.Files) != 1 || !strings.HasSuffix(p.Files[0], "-"+want+".jsonl") {
			t.Errorf("gemini %s: -r latest takes %q, want the session %s", version, p.Files, want)
		}
	}
	// A $set of messages replaces them; a $rewindTo cuts them back.
	os.WriteFile(filepath.Join(chats, "session-2026-01-01T12-00-cccccccc.jsonl"), []byte(
		geminiFile("cccccccc-3", "2026-01-01T12:00:00.000Z", geminiAsk, `{"$rewindTo":"m1"}`)), 0o600)
	env.Version = "0.61.0"
	if p := gemini([]string{"gemini", "-r", "latest"}, env); len(p.Files) != 1 || !strings.HasSuffix(p.Files[0], "-aaaaaaaa.jsonl") {
		t.Errorf("a session rewound to nothing is listed: -r latest takes %q", p.Files)
	}
}

// TestGemini_Argv: modes, runs that open no session, and new sessions.
func TestGemini_Argv(t *testing.T) {
	env, _ := geminiHomeFor(t, nil)
	for _, tc := range []struct {
		argv []string
		mode string
		tty  bool
	}{
		{[]string{"gemini", "-p", "x"}, ModePrint, true},
		{[]string{"gemini", "--prompt=x"}, ModePrint, true},
		{[]string{"gemini", "hello"}, ModeInteractive, true},
		{[]string{"gemini", "hello"}, ModePrint, false},
		{[]string{"gemini", "-p", "x", "-o", "json"}, ModeJSON, true},
		{[]string{"gemini", "-o", "stream-json", "-p", "x"}, ModeJSON, true},
		{[]string{"gemini", "-o", "text", "-p", "x"}, ModePrint, true},
		{[]string{"gemini", "--acp"}, ModeRPC, true},
		{[]string{"gemini", "--experimental-acp"}, ModeRPC, true},
		{[]string{"gemini"}, ModeInteractive, true},
		{[]string{"gemini", "-i", "x"}, ModeInteractive, true},
		{[]string{"gemini", "-m", "mcp"}, ModeInteractive, true},
		{[]string{"gemini", "--list-sessions"}, "", true},
		{[]string{"gemini", "--delete-session", "1"}, "", true},
		{[]string{"gemini", "mcp", "list"}, "", true},
		{[]string{"gemini", "--version"}, "", true},
	} {
		env.StdinTTY = tc.tty
		p := gemini(slices.Clone(tc.argv), env)
		if p.Mode != tc.mode {
			t.Errorf("%q (tty %v): mode %q, want %q", tc.argv, tc.tty, p.Mode, tc.mode)
		}
		if (tc.mode == "") != (len(p.Watch) == 0) {
			t.Errorf("%q: watch %v", tc.argv, p.Watch)
		}
	}
	p := gemini([]string{"gemini", "--session-id", "my-id", "-p", "x"}, env)
	if p.SessionID != "my-id" || len(p.Files) != 0 || len(p.Watch) != 1 || p.Watch[0].Dir != filepath.Join(env.Home, ".gemini", "tmp", "proj", "chats") ||
		p.Watch[0].Depth != 0 || p.Watch[0].Pattern != "session-*.jsonl" {
		t.Errorf("--session-id: %+v", p)
	}
	if p := gemini([]string{"gemini", "--session-file", "old.jsonl", "-p", "x"}, env); len(p.Files) != 0 || len(p.Watch) != 1 {
		t.Errorf("--session-file: the file is only read, the copy is new: %+v", p)
	}
	if p := gemini([]string{"gemini", "-w", "-p", "x"}, env); p.Unknown == "" {
		t.Errorf("--worktree: %+v, want unknown", p)
	}
	// GEMINI_CLI_HOME moves the home.
	env.Getenv = func(k string) string {
		if k == "GEMINI_CLI_HOME" {
			return "/elsewhere"
		}
		return ""
	}
	// A project gemini has not seen yet: its slug is chosen as it starts.
	if p := gemini([]string{"gemini", "-p", "x"}, env); p.Watch[0].Dir != "/elsewhere/.gemini/tmp" || p.Watch[0].Depth != 2 {
		t.Errorf("GEMINI_CLI_HOME: watch %v", p.Watch)
	}
}
