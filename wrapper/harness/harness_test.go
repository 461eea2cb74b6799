package harness

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// fixture lays out a home with pi, claude and codex sessions for cwd /w/proj.
type fixture struct {
	home, cwd string
	env       Env
	piDir     string
	claudeDir string
	codexDir  string
}

const (
	piOld     = "2026-11-01T08-00-00-000Z_01900000-0000-7000-8000-000000000001.jsonl"
	piNew     = "2026-11-02T08-00-00-000Z_01900000-0000-7000-8000-000000000002.jsonl"
	claudeOld = "11111111-1111-4111-8111-111111111111"
	claudeNew = "22222222-2222-4222-8222-222222222222"
	codexID   = "33333333-3333-4333-8333-333333333333"
	codexID2  = "44444444-4444-4444-8444-444444444444"
)

func newFixture(t *testing.T) fixture {
	t.Helper()
	home := t.TempDir()
	f := fixture{home: home, cwd: "/w/proj"}
	f.env = Env{Getenv: func(string) string { return "" }, Cwd: f.cwd, Home: home, Now: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}
	f.piDir = filepath.Join(home, ".pi", "agent", "sessions", "--w-proj--")
	f.claudeDir = filepath.Join(home, ".claude", "projects", "-w-proj")
	f.codexDir = filepath.Join(home, ".codex", "sessions", "2026", "11", "29")
	write := func(path, body string, age time.Duration) {
		os.MkdirAll(filepath.Dir(path), 0o700)
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		mt := time.Now().Add(-age)
		os.Chtimes(path, mt, mt)
	}
	write(filepath.Join(f.piDir, piOld), `{"type":"session","id":"01900000-0000-7000-8000-000000000001"}`+"\n", 2*time.Hour)
	write(filepath.Join(f.piDir, piNew), `{"type":"session","id":"01900000-0000-7000-8000-000000000002"}`+"\n", time.Hour)
	write(filepath.Join(f.piDir, "notes.jsonl"), "not a session\n", 0)
	write(filepath.Join(home, ".pi", "agent", "sessions", "--other--", "x_abc.jsonl"), `{"type":"session","id":"abcdef"}`+"\n", 0)
	write(filepath.Join(f.claudeDir, claudeOld+".jsonl"), "{}\n", 2*time.Hour)
	write(filepath.Join(f.claudeDir, claudeNew+".jsonl"), "{}\n", time.Hour)
	write(filepath.Join(f.codexDir, "rollout-2026-11-29T10-00-00-"+codexID+".jsonl"), `{"type":"session_meta","payload":{"id":"`+codexID+`","cwd":"/w/proj"}}`+"\n", time.Hour)
	write(filepath.Join(f.codexDir, "rollout-2026-11-29T11-00-00-"+codexID2+".jsonl"), `{"type":"session_meta","payload":{"id":"`+codexID2+`","cwd":"/elsewhere"}}`+"\n", 0)
	return f
}

func TestPi(t *testing.T) {
	f := newFixture(t)
	old, recent := filepath.Join(f.piDir, piOld), filepath.Join(f.piDir, piNew)
	tests := []struct {
		name    string
		version string // the pi release; empty: unknown
		argv    []string
		tty     bool
		noPin   bool
		files   []string // "NEW" means a pinned new file in the session folder
		argvOut []string
		mode    string
		id      string
		unknown bool
		watch   bool
	}{
		{name: "path", argv: []string{"pi", "-p", "hi", "--session", "s.jsonl"}, files: []string{"/w/proj/s.jsonl"}, mode: "print", watch: true},
		{name: "path with slash", argv: []string{"pi", "--session", "../x/s"}, tty: true, files: []string{"/w/x/s"}, mode: "interactive", watch: true},
		// pi reads --session=X as an extension's flag and fails: no file, argv as given.
		{name: "=form is no session", argv: []string{"pi", "--session=/abs/s.jsonl", "-p"}, argvOut: []string{"pi", "--session=/abs/s.jsonl", "-p"}, mode: "print", watch: true},
		{name: "id prefix pinned", argv: []string{"pi", "--session", "01900000-0000-7000-8000-00000000000", "-p", "x"}, files: []string{recent},
			argvOut: []string{"pi", "--session", recent, "-p", "x"}, id: "01900000-0000-7000-8000-000000000002", mode: "print", watch: true},
		{name: "id prefix exact old", argv: []string{"pi", "--session", "01900000-0000-7000-8000-000000000001"}, files: []string{old},
			argvOut: []string{"pi", "--session", old}, id: "01900000-0000-7000-8000-000000000001", mode: "print", watch: true},
		{name: "id prefix no-pin", argv: []string{"pi", "--session", "01900000-0000-7000-8000-000000000001"}, noPin: true, files: []string{old},
			argvOut: []string{"pi", "--session", "01900000-0000-7000-8000-000000000001"}, id: "01900000-0000-7000-8000-000000000001", mode: "print", watch: true},
		{name: "id of another project forks", argv: []string{"pi", "--session", "abc"}, mode: "print", watch: true},
		{name: "id not found", argv: []string{"pi", "--session", "zzz"}, mode: "print"},
		{name: "continue pinned", argv: []string{"pi", "-c", "-p", "y"}, files: []string{recent},
			argvOut: []string{"pi", "--session", recent, "-p", "y"}, id: "01900000-0000-7000-8000-000000000002", mode: "print", watch: true},
		{name: "continue long", argv: []string{"pi", "--continue"}, tty: true, files: []string{recent},
			argvOut: []string{"pi", "--session", recent}, id: "01900000-0000-7000-8000-000000000002", mode: "interactive", watch: true},
		{name: "continue no-pin", argv: []string{"pi", "-c"}, noPin: true, files: []string{recent}, argvOut: []string{"pi", "-c"},
			id: "01900000-0000-7000-8000-000000000002", mode: "print", watch: true},
		// pi names a new session's file itself (its header id must match the
		// name); the companion claims it before pi writes.
		{name: "new session not pre-named", argv: []string{"pi", "-p", "x"}, argvOut: []string{"pi", "-p", "x"}, mode: "print", watch: true},
		{name: "new session no-pin", argv: []string{"pi", "-p", "x"}, noPin: true, argvOut: []string{"pi", "-p", "x"}, mode: "print", watch: true},
		{name: "fork reads only", argv: []string{"pi", "--fork", old, "-p"}, argvOut: []string{"pi", "--fork", old, "-p"}, mode: "print", watch: true},
		{name: "no session", argv: []string{"pi", "--no-session", "-p", "x"}, argvOut: []string{"pi", "--no-session", "-p", "x"}},
		{name: "resume picker", argv: []string{"pi", "-r"}, tty: true, unknown: true, mode: "interactive"},
		{name: "json mode", argv: []string{"pi", "--mode", "json", "--session", "s.jsonl"}, tty: true, files: []string{"/w/proj/s.jsonl"}, mode: "json", watch: true},
		{name: "rpc mode", argv: []string{"pi", "--mode", "rpc", "--session", "s.jsonl"}, files: []string{"/w/proj/s.jsonl"}, mode: "rpc", watch: true},
		{name: "-p eats a message that looks like a flag value", argv: []string{"pi", "-p", "--session", "s.jsonl"}, files: []string{"/w/proj/s.jsonl"}, mode: "print", watch: true},
		{name: "-p message named -c is not continue", argv: []string{"pi", "-p", "---c", "--session", "a/s.jsonl"}, files: []string{"/w/proj/a/s.jsonl"}, mode: "print", watch: true},
		{name: "system prompt value is not a flag", argv: []string{"pi", "--system-prompt", "-c", "--session", "a/b.jsonl"}, files: []string{"/w/proj/a/b.jsonl"}, mode: "print", watch: true},
		{name: "extension flag eats a word", argv: []string{"pi", "--plan", "--session", "a/b.jsonl"}, files: []string{"/w/proj/a/b.jsonl"}, mode: "print", watch: true},
		{name: "extension flag with value", argv: []string{"pi", "--plan", "fast", "-c"}, files: []string{recent}, argvOut: []string{"pi", "--plan", "fast", "--session", recent},
			id: "01900000-0000-7000-8000-000000000002", mode: "print", watch: true},
		{name: "0.74: double dash is not a terminator", version: "0.74.2", argv: []string{"pi", "--", "-c"}, files: []string{recent}, argvOut: []string{"pi", "--", "--session", recent},
			id: "01900000-0000-7000-8000-000000000002", mode: "print", watch: true},
		{name: "session-dir flat", argv: []string{"pi", "--session-dir", "/sd", "--session", "zzz"}, mode: "print"},
		{name: "help", argv: []string{"pi", "--help"}, argvOut: []string{"pi", "--help"}},
		{name: "package command", argv: []string{"pi", "install", "x"}, argvOut: []string{"pi", "install", "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := f.env
			env.StdinTTY, env.NoPin, env.Version = tt.tty, tt.noPin, tt.version
			p, err := Resolve("", tt.argv, env)
			if err != nil {
				t.Fatal(err)
			}
			checkPlan(t, p, tt.files, tt.argvOut, tt.mode, tt.id, tt.unknown, tt.watch, f.piDir, "--session")
		})
	}
}

func checkPlan(t *testing.T, p Plan, files, argv []string, mode, id string, unknown, watch bool, dir, pinFlag string) {
	t.Helper()
	if len(files) == 1 && files[0] == "NEW" {
		if len(p.Files) != 1 || filepath.Dir(p.Files[0]) != dir {
			t.Fatalf("files %v, want one new file in %s", p.Files, dir)
		}
		if i := slices.Index(p.Argv, pinFlag); i < 0 || i+1 >= len(p.Argv) || !strings.Contains(p.Files[0], p.Argv[i+1]) {
			t.Fatalf("argv %v does not pin %s", p.Argv, p.Files[0])
		}
	} else if !slices.Equal(p.Files, files) {
		t.Errorf("files %v, want %v", p.Files, files)
	}
	if argv != nil && !slices.Equal(p.Argv, argv) {
		t.Errorf("argv %q, want %q", p.Argv, argv)
	}
	if p.Mode != mode {
		t.Errorf("mode %q, want %q", p.Mode, mode)
	}
	if id != "" && p.SessionID != id {
		t.Errorf("session id %q, want %q", p.SessionID, id)
	}
	if (p.Unknown != "") != unknown {
		t.Errorf("unknown %q, want %v", p.Unknown, unknown)
	}
	if (len(p.Watch) > 0) != watch {
		t.Errorf("watch %v, want %v", p.Watch, watch)
	}
}

func TestPi_SessionDirPrecedence(t *testing.T) {
	f := newFixture(t)
	vars := map[string]string{}
	env := f.env
	env.Getenv = func(k string) string { return vars[k] }
	dirOf := func(argv ...string) string {
		p, _ := Resolve("pi", append([]string{"pi"}, argv...), env)
		return p.Watch[0].Dir
	}
	if got := dirOf("-p"); got != f.piDir {
		t.Errorf("default: %s", got)
	}
	os.WriteFile(filepath.Join(f.home, ".pi", "agent", "settings.json"), []byte(`{"sessionDir":"~/from-settings"}`), 0o600)
	if got := dirOf("-p"); got != filepath.Join(f.home, "from-settings") {
		t.Errorf("settings.json: %s", got)
	}
	vars["PI_CODING_AGENT_SESSION_DIR"] = "/from-env"
	if got := dirOf("-p"); got != "/from-env" {
		t.Errorf("env: %s", got)
	}
	if got := dirOf("--session-dir", "rel", "-p"); got != "/w/proj/rel" {
		t.Errorf("--session-dir: %s", got)
	}
	vars["PI_CODING_AGENT_DIR"] = "/agent"
	delete(vars, "PI_CODING_AGENT_SESSION_DIR")
	if got := dirOf("-p"); got != "/agent/sessions/--w-proj--" {
		t.Errorf("agent dir: %s", got)
	}
}

func TestPiProjectDir(t *testing.T) {
	for cwd, want := range map[string]string{"/tmp/a/proj": "--tmp-a-proj--", "/": "----", `C:\x\y`: "--C--x-y--", "/a:b": "--a-b--"} {
		if got := PiProjectDir(cwd); got != want {
			t.Errorf("PiProjectDir(%q) = %q, want %q", cwd, got, want)
		}
	}
}

func TestClaude(t *testing.T) {
	f := newFixture(t)
	file := func(id string) string { return filepath.Join(f.claudeDir, id+".jsonl") }
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
		picker  bool // every session of the project, held while the picker is open
	}{
		{name: "session id", argv: []string{"claude", "--session-id", claudeOld, "-p", "x"}, files: []string{file(claudeOld)}, mode: "print", id: claudeOld, watch: true},
		{name: "session id =form", argv: []string{"claude", "--session-id=" + claudeOld}, files: []string{file(claudeOld)}, mode: "interactive", id: claudeOld, watch: true},
		{name: "resume id", argv: []string{"claude", "-r", claudeOld, "-p", "x"}, files: []string{file(claudeOld)}, argvOut: []string{"claude", "-r", claudeOld, "-p", "x"}, mode: "print", id: claudeOld, watch: true},
		{name: "resume =id", argv: []string{"claude", "--resume=" + claudeOld}, files: []string{file(claudeOld)}, mode: "interactive", watch: true},
		{name: "resume picker", argv: []string{"claude", "--resume"}, mode: "interactive", watch: true, picker: true},
		{name: "resume search term", argv: []string{"claude", "-r", "fix tests"}, mode: "interactive", watch: true, picker: true},
		{name: "continue pinned", argv: []string{"claude", "-c", "-p", "y"}, files: []string{file(claudeNew)},
			argvOut: []string{"claude", "--resume", claudeNew, "-p", "y"}, mode: "print", id: claudeNew, watch: true},
		{name: "continue no-pin", argv: []string{"claude", "--continue"}, noPin: true, files: []string{file(claudeNew)}, argvOut: []string{"claude", "--continue"}, mode: "interactive", watch: true},
		{name: "fork", argv: []string{"claude", "-r", claudeOld, "--fork-session", "-p"}, mode: "print", watch: true},
		{name: "new pinned", argv: []string{"claude", "-p", "hi"}, files: []string{"NEW"}, mode: "print", watch: true},
		{name: "new no-pin", argv: []string{"claude", "-p", "hi"}, noPin: true, argvOut: []string{"claude", "-p", "hi"}, mode: "print", watch: true},
		{name: "json", argv: []string{"claude", "-p", "--output-format", "stream-json", "--session-id", claudeOld}, files: []string{file(claudeOld)}, mode: "json", watch: true},
		{name: "rpc", argv: []string{"claude", "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--session-id", claudeOld}, files: []string{file(claudeOld)}, mode: "rpc", watch: true},
		{name: "list flag eats words", argv: []string{"claude", "--add-dir", "a", "b", "-c"}, files: []string{file(claudeNew)}, mode: "interactive", watch: true},
		{name: "value flag eats -c", argv: []string{"claude", "--append-system-prompt", "-c", "--session-id", claudeOld}, files: []string{file(claudeOld)}, mode: "interactive", watch: true},
		{name: "after -- all is prompt", argv: []string{"claude", "--session-id", claudeOld, "--", "-c"}, files: []string{file(claudeOld)}, mode: "interactive", watch: true},
		{name: "no persistence", argv: []string{"claude", "-p", "--no-session-persistence"}},
		{name: "worktree", argv: []string{"claude", "-w"}, unknown: true, mode: "interactive"},
		{name: "subcommand", argv: []string{"claude", "mcp", "list"}},
		{name: "version", argv: []string{"claude", "--version"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := f.env
			env.NoPin = tt.noPin
			p, err := Resolve("claude", tt.argv, env)
			if err != nil {
				t.Fatal(err)
			}
			checkPlan(t, p, tt.files, tt.argvOut, tt.mode, tt.id, tt.unknown, tt.watch, f.claudeDir, "--session-id")
			if want := []string{file(claudeNew), file(claudeOld)}; tt.picker != (p.Picker != nil) || tt.picker && !slices.Equal(slices.Sorted(slices.Values(p.Picker.Files)), slices.Sorted(slices.Values(want))) {
				t.Errorf("picker %+v, want one of %v: %v", p.Picker, want, tt.picker)
			}
		})
	}
	env := f.env
	env.NoCompanion = true
	if p, _ := Resolve("claude", []string{"claude", "-r"}, env); p.Picker != nil || p.Unknown == "" {
		t.Errorf("--no-companion: plan %+v, want the picker unknown (nothing would release what it holds)", p)
	}
}

func TestClaudeProjectDir(t *testing.T) {
	for cwd, want := range map[string]string{
		"/home/u/my_proj.v2": "-home-u-my-proj-v2",
		"/tmp/café":          "-tmp-caf-", // one UTF-16 unit
		"/tmp/a😀b":           "-tmp-a--b", // two: a surrogate pair
	} {
		if got := claudeProjectDir(cwd); got != want {
			t.Errorf("claudeProjectDir(%q) = %q, want %q", cwd, got, want)
		}
	}
	env := newFixture(t).env
	env.Cwd = "/" + strings.Repeat("a", 250)
	if p, _ := Resolve("claude", []string{"claude", "-p"}, env); p.Unknown == "" {
		t.Fatal("a hashed project folder was named")
	}
}

func TestCodex(t *testing.T) {
	f := newFixture(t)
	one := filepath.Join(f.codexDir, "rollout-2026-11-29T10-00-00-"+codexID+".jsonl")
	two := filepath.Join(f.codexDir, "rollout-2026-11-29T11-00-00-"+codexID2+".jsonl")
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
		{name: "exec resume id", argv: []string{"codex", "exec", "resume", codexID, "go on"}, files: []string{one}, mode: "print", id: codexID, watch: true},
		{name: "resume id", argv: []string{"codex", "resume", codexID2}, files: []string{two}, mode: "interactive", id: codexID2, watch: true},
		{name: "global flags first", argv: []string{"codex", "-c", "model=x", "-m", "fake", "exec", "--json", "resume", codexID}, files: []string{one}, mode: "json", watch: true},
		{name: "-c value is not a subcommand", argv: []string{"codex", "-c", "resume", "exec", "hi"}, mode: "print", watch: true},
		// --last is ranked by codex's own database: unknown, never pinned by mtime.
		{name: "resume last is codex's pick", argv: []string{"codex", "exec", "resume", "--last", "more"},
			argvOut: []string{"codex", "exec", "resume", "--last", "more"}, mode: "print", unknown: true},
		{name: "resume last all", argv: []string{"codex", "resume", "--last", "--all"}, argvOut: []string{"codex", "resume", "--last", "--all"}, mode: "interactive", unknown: true},
		{name: "resume last no-pin", argv: []string{"codex", "resume", "--last"}, noPin: true, argvOut: []string{"codex", "resume", "--last"}, mode: "interactive", unknown: true},
		{name: "resume unknown id", argv: []string{"codex", "resume", "nope"}, unknown: true, mode: "interactive"},
		{name: "resume picker", argv: []string{"codex", "resume"}, unknown: true, mode: "interactive"},
		{name: "exec new", argv: []string{"codex", "exec", "--skip-git-repo-check", "hi"}, mode: "print", watch: true},
		{name: "interactive new", argv: []string{"codex", "hello"}, mode: "interactive", watch: true},
		{name: "ephemeral", argv: []string{"codex", "exec", "--ephemeral", "hi"}},
		{name: "login", argv: []string{"codex", "login"}},
		{name: "prompt named login after exec", argv: []string{"codex", "exec", "login"}, mode: "print", watch: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := f.env
			env.NoPin = tt.noPin
			p, err := Resolve("", tt.argv, env)
			if err != nil {
				t.Fatal(err)
			}
			checkPlan(t, p, tt.files, tt.argvOut, tt.mode, tt.id, tt.unknown, tt.watch, "", "")
			if tt.watch && (p.Watch[0].Depth != 3 || p.Watch[0].Dir != filepath.Join(f.home, ".codex", "sessions")) {
				t.Errorf("watch %+v", p.Watch)
			}
		})
	}
}

func TestResolve_ByBaseNameOrFlag(t *testing.T) {
	env := newFixture(t).env
	if p, _ := Resolve("", []string{"/usr/local/bin/pi", "--no-session"}, env); p.Harness != "pi" {
		t.Errorf("harness %q, want pi", p.Harness)
	}
	if p, _ := Resolve("", []string{"my-agent"}, env); p.Harness != "none" || len(p.Files) != 0 {
		t.Errorf("plan %+v, want none", p)
	}
	if p, _ := Resolve("none", []string{"pi", "-c"}, env); p.Harness != "none" || len(p.Files) != 0 {
		t.Errorf("--harness none: %+v", p)
	}
	if _, err := Resolve("emacs", []string{"x"}, env); err == nil {
		t.Error("unknown harness accepted")
	}
}

func TestCompanion_SessionRunsOnly(t *testing.T) {
	for argv, want := range map[string]string{
		"pi -p x": "pi", "pi --mode rpc": "pi", "pi --no-session": "pi", "pi -r": "pi",
		"claude -p x": "claude", "claude -r": "claude", "claude --help": "", "claude --no-session-persistence -p x": "", "claude --bg -p x": "",
		"pi --help": "", "pi install x": "", "pi --version": "", "codex exec x": "", "sh -c x": "",
	} {
		p, err := Resolve("", strings.Fields(argv), Env{Cwd: "/w", Home: "/h"})
		if err != nil {
			t.Fatal(err)
		}
		if got := Companion(p); got != want {
			t.Errorf("%s: companion %q, want %q", argv, got, want)
		}
	}
	got := WithPiCompanion([]string{"pi", "-p", "x"}, "/c/pi.js")
	if want := []string{"pi", "-e", "/c/pi.js", "-p", "x"}; !slices.Equal(got, want) {
		t.Errorf("argv %q, want %q", got, want)
	}
}

func TestWithClaudeCompanion_SettingsHook_NotOverTheUsersOwn(t *testing.T) {
	got, ok := WithClaudeCompanion([]string{"claude", "-p", "x"}, "'/bin/padrun' companion claude-hook")
	if !ok || len(got) != 5 || got[1] != "--settings" || !strings.Contains(got[2], `"SessionStart"`) || !strings.Contains(got[2], "companion claude-hook") {
		t.Errorf("argv %q", got)
	}
	for _, argv := range [][]string{{"claude", "--settings", "s.json"}, {"claude", "--settings={}"}} {
		if out, ok := WithClaudeCompanion(argv, "x"); ok || !slices.Equal(out, argv) {
			t.Errorf("%q: changed to %q", argv, out)
		}
	}
	if q := ShellQuote("/a b/it's"); q != `'/a b/it'\''s'` {
		t.Errorf("quoted %s", q)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"plain/path-1.jsonl": "plain/path-1.jsonl", "": "''", "a b": "'a b'", "it's": `'it'\''s'`,
		"$HOME": "'$HOME'", "--wait=10": "--wait=10", "*": "'*'", "a\nb": "'a\nb'",
	} {
		if got := ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestClaudeAwaitsHooks: claude 2.1.197 waits for its SessionStart hooks
// before it writes to a picked session; 2.1.332, anything between, and an
// unknown release do not.
func TestClaudeAwaitsHooks(t *testing.T) {
	for release, want := range map[string]bool{"2.1.197": true, "2.1.100": true, "2.1.198": false, "2.1.332": false, "": false, "x": false} {
		if got := claudeAwaitsHooks(release); got != want {
			t.Errorf("claudeAwaitsHooks(%q) = %v, want %v", release, got, want)
		}
	}
}
