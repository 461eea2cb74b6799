package harness

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func ompEnv(cwd, home string, vars map[string]string) Env {
	return Env{Cwd: cwd, Home: home, Getenv: func(k string) string { return vars[k] }}
}

// TestOmp_Argv: omp's argv as its parseArgs and resolveCliArgv read it
// (18.1.17 and 18.2.3 alike).
func TestOmp_Argv(t *testing.T) {
	cwd, home := "/srv/proj", "/home/u"
	s := filepath.Join(cwd, "s.jsonl")
	tests := []struct {
		name    string
		argv    []string
		files   []string
		mode    string
		unknown bool
	}{
		{name: "-r path", argv: []string{"omp", "-p", "-r", "s.jsonl", "x"}, files: []string{s}, mode: ModePrint},
		{name: "--session is --resume", argv: []string{"omp", "--session", "/a/b.jsonl"}, files: []string{"/a/b.jsonl"}, mode: ModeInteractive},
		{name: "--resume=path", argv: []string{"omp", "--resume=sub/s"}, files: []string{filepath.Join(cwd, "sub/s")}, mode: ModeInteractive},
		{name: "launch", argv: []string{"omp", "launch", "-r", "s.jsonl", "-p"}, files: []string{s}, mode: ModePrint},
		{name: "json", argv: []string{"omp", "--mode", "json", "-r", "s.jsonl"}, files: []string{s}, mode: ModeJSON},
		{name: "rpc", argv: []string{"omp", "--mode", "rpc", "-r", "s.jsonl"}, files: []string{s}, mode: ModeRPC},
		// -p takes no message: the next word is -r's business.
		{name: "-p is a flag", argv: []string{"omp", "-p", "-r", "s.jsonl"}, files: []string{s}, mode: ModePrint},
		{name: "picker", argv: []string{"omp", "-r"}, mode: ModeInteractive, unknown: true},
		{name: "picker before a flag", argv: []string{"omp", "-r", "-p"}, mode: ModePrint, unknown: true},
		{name: "an id", argv: []string{"omp", "-r", "0190abcd"}, mode: ModeInteractive, unknown: true},
		{name: "-c", argv: []string{"omp", "-c", "-p", "x"}, mode: ModePrint, unknown: true},
		{name: "-c id", argv: []string{"omp", "-c", "01900000-0000-7000-8000-000000000001"}, mode: ModeInteractive, unknown: true},
		{name: "--cwd then a relative path", argv: []string{"omp", "--cwd", "/x", "-r", "s.jsonl"}, mode: ModeInteractive, unknown: true},
		{name: "--cwd then an absolute path", argv: []string{"omp", "--cwd", "/x", "-r", "/a/s.jsonl"}, files: []string{"/a/s.jsonl"}, mode: ModeInteractive},
		{name: "fork", argv: []string{"omp", "--fork", "s.jsonl", "-p", "x"}, mode: ModePrint},
		{name: "new", argv: []string{"omp", "-p", "x"}, mode: ModePrint},
		// A value flag takes the next argument, whatever it is.
		{name: "--system-prompt takes -r", argv: []string{"omp", "--system-prompt", "-r", "s.jsonl"}, mode: ModeInteractive},
		{name: "terminator", argv: []string{"omp", "--", "-r", "s.jsonl"}, mode: ModeInteractive},
		{name: "no session", argv: []string{"omp", "--no-session", "-r", "s.jsonl"}},
		{name: "version", argv: []string{"omp", "--version"}},
		{name: "a command", argv: []string{"omp", "config", "-r", "s.jsonl"}},
		{name: "a command after flags", argv: []string{"omp", "--model", "m", "stats"}},
		{name: "--model's value is no command", argv: []string{"omp", "--model", "stats", "-r", "s.jsonl"}, files: []string{s}, mode: ModeInteractive},
		{name: "acp", argv: []string{"omp", "acp"}, mode: ModeRPC, unknown: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := ompEnv(cwd, home, nil)
			env.StdinTTY = true
			p := omp(tt.argv, env)
			if !slices.Equal(p.Files, tt.files) || p.Mode != tt.mode || (p.Unknown != "") != tt.unknown {
				t.Errorf("omp(%q) = files %q mode %q unknown %q; want %q %q unknown=%v", tt.argv, p.Files, p.Mode, p.Unknown, tt.files, tt.mode, tt.unknown)
			}
			if !slices.Equal(p.Argv, tt.argv) {
				t.Errorf("omp(%q) changed argv to %q", tt.argv, p.Argv)
			}
		})
	}
}

// TestOmp_SessionDir: where omp writes a new session (session-paths.ts,
// pi-utils dirs.ts).
func TestOmp_SessionDir(t *testing.T) {
	home := t.TempDir()
	xdg := t.TempDir()
	tests := []struct {
		name, cwd string
		argv      []string
		vars      map[string]string
		want      string
	}{
		{name: "below home", cwd: filepath.Join(home, "a", "b"), want: filepath.Join(home, ".omp/agent/sessions/-a-b")},
		{name: "home", cwd: home, want: filepath.Join(home, ".omp/agent/sessions/-")},
		{name: "below tmp", cwd: "/t/x/y", vars: map[string]string{"TMPDIR": "/t"}, want: filepath.Join(home, ".omp/agent/sessions/-tmp-x-y")},
		{name: "tmp", cwd: "/t", vars: map[string]string{"TMPDIR": "/t"}, want: filepath.Join(home, ".omp/agent/sessions/-tmp")},
		{name: "elsewhere", cwd: "/srv/a", want: filepath.Join(home, ".omp/agent/sessions/--srv-a--")},
		{name: "agent dir", cwd: "/srv/a", vars: map[string]string{"PI_CODING_AGENT_DIR": "/ag"}, want: "/ag/sessions/--srv-a--"},
		{name: "session dir", cwd: "/srv/a", vars: map[string]string{"PI_CODING_AGENT_SESSION_DIR": "/sd"}, want: "/sd"},
		{name: "--session-dir", cwd: "/srv/a", argv: []string{"--session-dir", "d"}, vars: map[string]string{"PI_CODING_AGENT_SESSION_DIR": "/sd"}, want: "/srv/a/d"},
		{name: "--profile", cwd: "/srv/a", argv: []string{"--profile", "w"}, vars: map[string]string{"PI_CODING_AGENT_DIR": "/ag"}, want: filepath.Join(home, ".omp/profiles/w/agent/sessions/--srv-a--")},
		{name: "OMP_PROFILE", cwd: "/srv/a", vars: map[string]string{"OMP_PROFILE": "w"}, want: filepath.Join(home, ".omp/profiles/w/agent/sessions/--srv-a--")},
		{name: "PI_CONFIG_DIR", cwd: "/srv/a", vars: map[string]string{"PI_CONFIG_DIR": ".o2"}, want: filepath.Join(home, ".o2/agent/sessions/--srv-a--")},
		{name: "XDG_DATA_HOME without omp", cwd: "/srv/a", vars: map[string]string{"XDG_DATA_HOME": home}, want: filepath.Join(home, ".omp/agent/sessions/--srv-a--")},
		{name: "XDG_DATA_HOME with omp", cwd: "/srv/a", vars: map[string]string{"XDG_DATA_HOME": xdg}, want: filepath.Join(xdg, "omp/sessions/--srv-a--")},
		{name: "XDG_DATA_HOME under an agent dir", cwd: "/srv/a", vars: map[string]string{"XDG_DATA_HOME": xdg, "PI_CODING_AGENT_DIR": "/ag"}, want: "/ag/sessions/--srv-a--"},
	}
	if err := os.Mkdir(filepath.Join(xdg, "omp"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vars := map[string]string{"TMPDIR": "/nonexistent-tmp"}
			for k, v := range tt.vars {
				vars[k] = v
			}
			p := omp(append([]string{"omp", "-p"}, tt.argv...), ompEnv(tt.cwd, home, vars))
			if len(p.Watch) != 1 || p.Watch[0].Dir != tt.want {
				t.Errorf("watch %v, want %s", p.Watch, tt.want)
			}
		})
	}
}

// TestOmp_SessionID: omp's file opens with a title slot before pi's
// session header.
func TestOmp_SessionID(t *testing.T) {
	f := filepath.Join(t.TempDir(), "s.jsonl")
	body := `{"type":"title","v":1,"title":"","pad":"   "}` + "\n" + `{"type":"session","version":3,"id":"0190-x","cwd":"/w"}` + "\n"
	if err := os.WriteFile(f, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	p := omp([]string{"omp", "-p", "-r", f}, ompEnv("/w", "/home/u", nil))
	if p.SessionID != "0190-x" {
		t.Errorf("session id %q, want 0190-x", p.SessionID)
	}
}
