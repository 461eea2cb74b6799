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
// database); prefixes, names and the picker are unknown before the start,
// and every run but a subcommand is claimed by copilot's in-use lock.
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
		{name: "prefix", argv: []string{"copilot", "-r", "8888888", "-p", "x"}, unknown: true, mode: "print", watch: true},
		{name: "name", argv: []string{"copilot", "--resume=my feature"}, unknown: true, mode: "interactive", watch: true},
		{name: "picker", argv: []string{"copilot", "--resume", "-p", "x"}, unknown: true, mode: "print", watch: true},
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
			if claims := p.InUseClaims == state; claims != (tt.mode != "") {
				t.Errorf("in-use claims %q, want them: %v", p.InUseClaims, tt.mode != "")
			}
		})
	}
	os.MkdirAll(filepath.Join(state, copilotB), 0o700)
	if p, _ := Resolve("copilot", []string{"copilot", "--continue", "-p", "x"}, env); p.Unknown == "" || len(p.Files) != 0 {
		t.Errorf("two sessions: plan %+v, want unknown (copilot ranks them in its database, not by mtime)", p)
	}
}

// TestCopilotRelease: the release copilot's launcher runs is the newest
// complete package in its caches not older than the built-in one, unless
// auto-update is off or --prefer-version names one.
func TestCopilotRelease(t *testing.T) {
	home := t.TempDir()
	cache := filepath.Join(t.TempDir(), "cache")
	pkg := func(root, name string, files ...string) {
		dir := filepath.Join(root, "pkg", "universal", name)
		os.MkdirAll(dir, 0o700)
		for _, f := range append([]string{"index.js"}, files...) {
			os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o600)
		}
	}
	vars := map[string]string{"COPILOT_CACHE_HOME": cache}
	env := Env{Getenv: func(k string) string { return vars[k] }, Home: home}
	argv := []string{"copilot", "-p", "x"}
	if got := copilotRelease("1.0.102", argv, env); got != "1.0.102" {
		t.Errorf("empty caches: %s, want the built-in 1.0.102", got)
	}
	pkg(cache, "1.0.90")
	pkg(cache, "1.0.102")
	if got := copilotRelease("1.0.102", argv, env); got != "1.0.102" {
		t.Errorf("older cached: %s, want the built-in 1.0.102", got)
	}
	pkg(filepath.Join(home, ".copilot"), "1.0.110")
	pkg(cache, "1.0.111-beta.1")
	pkg(cache, "junk")
	if got := copilotRelease("1.0.102", argv, env); got != "1.0.111-beta.1" {
		t.Errorf("newer cached: %s, want 1.0.111-beta.1 (by major.minor.patch first)", got)
	}
	// 1.0.102 skips a package whose manifest lists cli-main.js it lacks.
	pkg(cache, "1.1.0", "package.json")
	os.WriteFile(filepath.Join(cache, "pkg", "universal", "1.1.0", "package.json"), []byte(`{"files":["app.js","cli-main.js"]}`), 0o600)
	if got := copilotRelease("1.0.102", argv, env); got != "1.0.111-beta.1" {
		t.Errorf("incomplete newest: %s, want 1.0.111-beta.1", got)
	}
	if got := copilotRelease("1.0.40", argv, env); got != "1.1.0" {
		t.Errorf("1.0.40 runs the newest with an index.js: %s, want 1.1.0", got)
	}
	for _, tt := range []struct {
		name string
		argv []string
		vars map[string]string
		want string
	}{
		{"--no-auto-update", []string{"copilot", "--no-auto-update", "-p", "x"}, nil, "1.0.102"},
		{"COPILOT_AUTO_UPDATE=FALSE", argv, map[string]string{"COPILOT_AUTO_UPDATE": "FALSE"}, "1.0.102"},
		{"--prefer-version cached", []string{"copilot", "--prefer-version", "1.0.90"}, nil, "1.0.90"},
		{"--prefer-version missing", []string{"copilot", "--prefer-version", "9.9.9"}, nil, "1.0.102"},
	} {
		for k, v := range tt.vars {
			vars[k] = v
		}
		if got := copilotRelease("1.0.102", tt.argv, env); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
		for k := range tt.vars {
			delete(vars, k)
		}
	}
	if got := copilotRelease("", argv, env); got != "" {
		t.Errorf("unknown package: %q, want unknown", got)
	}
}

// TestCopilotInUse: copilot's in-use locks are inuse.<PID>.lock beside a
// session's events.jsonl, with the .hold that goes with each; other
// files are no copilot session's.
func TestCopilotInUse(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "session-state", copilotA)
	os.MkdirAll(dir, 0o700)
	for _, f := range []string{"inuse.42.lock", "inuse.42.hold", "inuse.7.lock", "inuse.x.lock", "inuse..lock", "inuse.9.hold"} {
		os.WriteFile(filepath.Join(dir, f), []byte("1\n"), 0o600)
	}
	os.Mkdir(filepath.Join(dir, "inuse.8.lock"), 0o700)
	locks, ok := InUseLocks(filepath.Join(dir, "events.jsonl"))
	if !ok || len(locks) != 2 {
		t.Fatalf("locks %+v, %v: want inuse.42.lock and inuse.7.lock", locks, ok)
	}
	if l := locks[0]; l.Pid != 42 || l.Harness != "copilot" || len(l.Also) != 1 || filepath.Base(l.Also[0]) != "inuse.42.hold" || l.Written.IsZero() {
		t.Errorf("inuse.42.lock: %+v", l)
	}
	if l := locks[1]; l.Pid != 7 || len(l.Also) != 0 {
		t.Errorf("inuse.7.lock: %+v", l)
	}
	if _, ok := InUseLocks(filepath.Join(dir, "other.jsonl")); ok {
		t.Error("other.jsonl taken for a copilot session")
	}
}
