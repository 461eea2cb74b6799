package harness

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

const (
	qwenOld   = "55555555-5555-4555-8555-555555555555"
	qwenNew   = "66666666-6666-4666-8666-666666666666"
	qwenOther = "77777777-7777-4777-8777-777777777777"
)

// qwenFixture lays out ~/.qwen/projects/-w-proj/chats with two sessions
// of /w/proj and, newest of all, one whose first record names another
// folder (qwen's worktree of another project, say).
func qwenFixture(t *testing.T) (Env, string, func(name, body string, age time.Duration)) {
	t.Helper()
	home := t.TempDir()
	env := Env{Getenv: func(string) string { return "" }, Cwd: "/w/proj", Home: home, Version: "0.24.4"}
	dir := filepath.Join(home, ".qwen", "projects", "-w-proj", "chats")
	write := func(name, body string, age time.Duration) {
		p := filepath.Join(dir, name)
		os.MkdirAll(dir, 0o700)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		mt := time.Now().Add(-age)
		os.Chtimes(p, mt, mt)
	}
	rec := func(id, cwd string) string {
		return `{"sessionId":"` + id + `","cwd":"` + cwd + `","type":"user"}` + "\n"
	}
	write(qwenOld+".jsonl", rec(qwenOld, "/w/proj"), 3*time.Hour)
	write(qwenNew+".jsonl", "\n"+rec(qwenNew, "/w/proj"), 2*time.Hour)
	write(qwenOther+".jsonl", rec(qwenOther, "/w/elsewhere"), time.Hour)
	write("notes.jsonl", rec("notes", "/w/proj"), 0) // not named like a session
	return env, dir, write
}

func TestQwen(t *testing.T) {
	env, dir, _ := qwenFixture(t)
	file := func(id string) string { return filepath.Join(dir, id+".jsonl") }
	tests := []struct {
		name    string
		argv    []string
		noPin   bool
		files   []string
		argvOut []string
		mode    string
		id      string
		unknown bool
		watch   bool
	}{
		{name: "continue pinned", argv: []string{"qwen", "-c", "-p", "y"}, files: []string{file(qwenNew)},
			argvOut: []string{"qwen", "--resume", qwenNew, "-p", "y"}, mode: "print", id: qwenNew, watch: true},
		{name: "continue true pinned", argv: []string{"qwen", "--continue", "true", "-p", "y"}, files: []string{file(qwenNew)},
			argvOut: []string{"qwen", "--resume", qwenNew, "-p", "y"}, mode: "print", id: qwenNew, watch: true},
		{name: "continue false", argv: []string{"qwen", "--continue=false", "-p", "y"}, mode: "print", watch: true},
		{name: "continue no-pin", argv: []string{"qwen", "--continue"}, noPin: true, files: []string{file(qwenNew)},
			argvOut: []string{"qwen", "--continue"}, mode: "interactive", watch: true},
		{name: "resume id", argv: []string{"qwen", "-r", qwenOld, "-p", "x"}, files: []string{file(qwenOld)},
			argvOut: []string{"qwen", "-r", qwenOld, "-p", "x"}, mode: "print", id: qwenOld, watch: true},
		{name: "resume =id", argv: []string{"qwen", "--resume=" + qwenOld}, files: []string{file(qwenOld)}, mode: "interactive", watch: true},
		{name: "resume picker", argv: []string{"qwen", "-r"}, unknown: true, mode: "interactive"},
		{name: "resume picker before a flag", argv: []string{"qwen", "-r", "-p", "x"}, unknown: true, mode: "print"},
		{name: "session id", argv: []string{"qwen", "--session-id", qwenOld, "-p", "x"}, files: []string{file(qwenOld)}, mode: "print", id: qwenOld, watch: true},
		{name: "fork", argv: []string{"qwen", "-c", "--fork-session", "-p", "x"}, mode: "print", watch: true},
		{name: "new", argv: []string{"qwen", "-p", "hi"}, argvOut: []string{"qwen", "-p", "hi"}, mode: "print", watch: true},
		{name: "positional prompt", argv: []string{"qwen", "hi"}, mode: "print", watch: true},
		{name: "interactive prompt", argv: []string{"qwen", "-i", "hi"}, mode: "interactive", watch: true},
		{name: "json", argv: []string{"qwen", "-p", "x", "-o", "json", "-c"}, files: []string{file(qwenNew)}, mode: "json", watch: true},
		{name: "stream-json in", argv: []string{"qwen", "--input-format", "stream-json", "-o", "stream-json"}, mode: "rpc", watch: true},
		{name: "acp", argv: []string{"qwen", "--acp"}, mode: "rpc", watch: true},
		{name: "string flag leaves -c", argv: []string{"qwen", "--model", "-c", "-p", "x"}, files: []string{file(qwenNew)}, mode: "print", watch: true},
		{name: "list flag eats words", argv: []string{"qwen", "--allowed-tools", "a", "b", "-c"}, files: []string{file(qwenNew)}, mode: "interactive", watch: true},
		{name: "boolean eats true", argv: []string{"qwen", "--yolo", "true", "-c"}, files: []string{file(qwenNew)}, mode: "interactive", watch: true},
		{name: "after -- all is prompt", argv: []string{"qwen", "--", "-c"}, mode: "print", watch: true},
		{name: "no recording", argv: []string{"qwen", "-p", "x", "--chat-recording=false"}},
		{name: "worktree", argv: []string{"qwen", "--worktree", "w"}, unknown: true, mode: "interactive"},
		{name: "subcommand", argv: []string{"qwen", "mcp", "list"}},
		{name: "version", argv: []string{"qwen", "--version"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := env
			env.NoPin = tt.noPin
			p, err := Resolve("qwen", tt.argv, env)
			if err != nil {
				t.Fatal(err)
			}
			checkPlan(t, p, tt.files, tt.argvOut, tt.mode, tt.id, tt.unknown, tt.watch, dir, "--resume")
		})
	}
}

// TestQwen_ContinueRanksAsQwen: -c takes the newest session by mtime whose
// first record's cwd is this project, as qwen's listSessions: not the
// newest file, not one named unlike a session; a worktree of the project
// and a runtime status naming it count; an unreadable first line makes the
// pick unknown; none at all is a new session.
func TestQwen_ContinueRanksAsQwen(t *testing.T) {
	pick := func(env Env) Plan {
		t.Helper()
		p, err := Resolve("qwen", []string{"qwen", "-c", "-p", "x"}, env)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	env, dir, write := qwenFixture(t)
	if p := pick(env); p.SessionID != qwenNew {
		t.Errorf("picked %q, want %s (the newest of this project; %s is newer but another's)", p.SessionID, qwenNew, qwenOther)
	}
	write(qwenOther+".jsonl", `{"sessionId":"`+qwenOther+`","cwd":"/w/proj/.qwen/worktrees/t1"}`+"\n", time.Hour)
	if p := pick(env); p.SessionID != qwenOther {
		t.Errorf("picked %q, want %s (a worktree of the project)", p.SessionID, qwenOther)
	}
	write(qwenOther+".jsonl", `{"sessionId":"`+qwenOther+`","cwd":"/w/elsewhere"}`+"\n", time.Hour)
	write(qwenOther+".runtime.json", `{"sessionId":"`+qwenOther+`","workDir":"/w/proj"}`, 0)
	if p := pick(env); p.SessionID != qwenOther {
		t.Errorf("picked %q, want %s (its runtime status names the project)", p.SessionID, qwenOther)
	}
	write(qwenOld+".jsonl", "{not json\n", 0)
	if p := pick(env); p.Unknown == "" || len(p.Files) != 0 {
		t.Errorf("plan %+v, want unknown: the newest file's first line is not a record", p)
	}
	os.RemoveAll(dir)
	if p := pick(env); p.Unknown != "" || len(p.Files) != 0 || len(p.Watch) != 1 {
		t.Errorf("plan %+v, want a new session, watched", p)
	}
}

// TestQwen_Folder: QWEN_RUNTIME_DIR before QWEN_HOME before ~/.qwen; a
// settings file that moves the runtime folder makes the file unknown.
func TestQwen_Folder(t *testing.T) {
	env, _, _ := qwenFixture(t)
	vars := map[string]string{}
	env.Getenv = func(k string) string { return vars[k] }
	dirOf := func() string {
		p, _ := Resolve("qwen", []string{"qwen", "-p", "x"}, env)
		if len(p.Watch) == 0 {
			return "unknown: " + p.Unknown
		}
		return p.Watch[0].Dir
	}
	if got, want := dirOf(), filepath.Join(env.Home, ".qwen", "projects", "-w-proj", "chats"); got != want {
		t.Errorf("default %s, want %s", got, want)
	}
	vars["QWEN_HOME"] = "/q/home"
	if got := dirOf(); got != "/q/home/projects/-w-proj/chats" {
		t.Errorf("QWEN_HOME: %s", got)
	}
	vars["QWEN_RUNTIME_DIR"] = "~/rt"
	if got := dirOf(); got != filepath.Join(env.Home, "rt", "projects", "-w-proj", "chats") {
		t.Errorf("QWEN_RUNTIME_DIR: %s", got)
	}
	delete(vars, "QWEN_RUNTIME_DIR")
	delete(vars, "QWEN_HOME")
	os.WriteFile(filepath.Join(env.Home, ".qwen", "settings.json"), []byte(`{"advanced":{"runtimeOutputDir":"/x"}}`), 0o600)
	if got := dirOf(); got[:8] != "unknown:" {
		t.Errorf("runtimeOutputDir in settings: %s, want unknown", got)
	}
}

// TestQwenCompanion_DefaultsFile_NeverOverTheUsersOwn: padrun's hooks go
// into a system defaults file of qwen's (SessionStart and UserPromptSubmit,
// claude's schema), and only when qwen has none that they would hide: the
// one $QWEN_CODE_SYSTEM_DEFAULTS_PATH names, else system-defaults.json
// beside $QWEN_CODE_SYSTEM_SETTINGS_PATH.
func TestQwenCompanion_DefaultsFile_NeverOverTheUsersOwn(t *testing.T) {
	a, _ := Lookup("qwen")
	c := a.Companion
	env, b := c.Settings("'/bin/padrun' companion qwen-hook")
	var s struct {
		Hooks map[string][]struct {
			Hooks []struct{ Type, Command string }
		}
	}
	if err := json.Unmarshal(b, &s); env != "QWEN_CODE_SYSTEM_DEFAULTS_PATH" || err != nil {
		t.Fatalf("settings %s for %s: %v", b, env, err)
	}
	for _, e := range []string{"SessionStart", "UserPromptSubmit"} {
		if h := s.Hooks[e]; len(h) != 1 || len(h[0].Hooks) != 1 || h[0].Hooks[0].Command != "'/bin/padrun' companion qwen-hook" {
			t.Errorf("%s: %+v", e, h)
		}
	}
	dir := t.TempDir()
	mine := filepath.Join(dir, "system-defaults.json")
	vars := map[string]string{}
	getenv := func(k string) string { return vars[k] }
	vars["QWEN_CODE_SYSTEM_DEFAULTS_PATH"] = mine
	if c.Occupied(getenv) {
		t.Errorf("occupied by %s, which does not exist", mine)
	}
	if err := os.WriteFile(mine, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if !c.Occupied(getenv) {
		t.Errorf("not occupied by %s", mine)
	}
	vars = map[string]string{"QWEN_CODE_SYSTEM_SETTINGS_PATH": filepath.Join(dir, "settings.json")}
	if !c.Occupied(getenv) {
		t.Errorf("not occupied by system-defaults.json beside the system settings")
	}
}

// TestQwenSessionFile: the names qwen's listing ranks, as its
// SESSION_FILE_PATTERN (^[0-9a-fA-F-]{32,36}\.jsonl$) takes them.
func TestQwenSessionFile(t *testing.T) {
	for name, want := range map[string]bool{
		"0123456789abcdef0123456789ABCDEF.jsonl":      true,
		"12345678-1234-4234-8234-123456789abc.jsonl":  true,
		"0123456789abcdef0123456789abcde.jsonl":       false, // 31
		"12345678-1234-4234-8234-123456789abcd.jsonl": false, // 37
		"0123456789abcdef0123456789abcdeg.jsonl":      false,
		"0123456789abcdef0123456789abcdef.json":       false,
		"0123456789abcdef0123456789abcdef.jsonl.bak":  false,
		".jsonl": false,
	} {
		if qwenSessionFile(name) != want {
			t.Errorf("qwenSessionFile(%q) = %v, want %v", name, !want, want)
		}
	}
}
