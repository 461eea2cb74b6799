package wrapper

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/padrun/padrun/wrapper/control"
)

func TestPadTOMLAgent(t *testing.T) {
	dir := t.TempDir()
	for body, want := range map[string]string{
		"agent_name = \"wren\"\n":                     "wren",
		"# c\nagent_name='kite' # note\n":             "kite",
		"[agent]\nagent_name = \"nested\"\n":          "",
		"other = 1\n":                                 "",
		"agent_name = \"\"\n":                         "",
		"agent_name = \"a\"\n[x]\nagent_name = \"b\"": "a",
	} {
		path := filepath.Join(dir, ".pad.toml")
		os.WriteFile(path, []byte(body), 0o600)
		if got, _, _ := padTOMLAgent(path); got != want {
			t.Errorf("%q: agent %q, want %q", body, got, want)
		}
	}
}

func TestResolveAgent_Order(t *testing.T) {
	dir := t.TempDir()
	deep := filepath.Join(dir, "a", "b")
	os.MkdirAll(deep, 0o700)
	env := EnvFrom([]string{"PAD_AGENT=env"}).Agent
	if got, _ := resolveAgent("flag", deep, env, "pi"); got != "flag" {
		t.Errorf("--agent: got %q", got)
	}
	if got, _ := resolveAgent("", deep, env, "pi"); got != "env" {
		t.Errorf("$PAD_AGENT: got %q", got)
	}
	os.WriteFile(filepath.Join(dir, "a", ".pad.toml"), []byte("agent_name = \"toml\"\n"), 0o600)
	if got, _ := resolveAgent("", deep, env, "pi"); got != "toml" {
		t.Errorf(".pad.toml: got %q", got)
	}
	os.Remove(filepath.Join(dir, "a", ".pad.toml"))
	if got, _ := resolveAgent("", deep, "", "claude"); got != "claude-code" {
		t.Errorf("harness: got %q", got)
	}
	if got, _ := resolveAgent("", deep, "", "none"); got != "" {
		t.Errorf("none: got %q", got)
	}
}

func TestGuardedFiles_CanonicalSortedUnique(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	os.Mkdir(real, 0o700)
	os.Symlink(real, filepath.Join(dir, "link"))
	files, err := guardedFiles([]string{filepath.Join(dir, "link", "b.jsonl"), filepath.Join(real, "a.jsonl")}, []string{filepath.Join(real, "b.jsonl"), filepath.Join(dir, "new", "c.jsonl")})
	if err != nil {
		t.Fatal(err)
	}
	realDir, _ := filepath.EvalSymlinks(real)
	want := []string{filepath.Join(realDir, "a.jsonl"), filepath.Join(realDir, "b.jsonl"), filepath.Join(filepath.Dir(realDir), "new", "c.jsonl")}
	slices.Sort(want)
	if !slices.Equal(files, want) {
		t.Fatalf("got %v, want %v", files, want)
	}
	if _, err := guardedFiles([]string{dir + "/"}, nil); err == nil {
		t.Fatal("a folder was accepted as a session file")
	}
}

func TestChildEnv(t *testing.T) {
	in := []string{"PATH=/bin", "PAD_SESSION_PID=1", "PADRUN_SESSION_FILE=/old", "PADRUN_MARKER=/old.live.json", "PAD_AGENT=mine"}
	env := childEnv(in, 42, "wren", nil)
	for _, want := range []string{"PATH=/bin", "PAD_SESSION_PID=42", "PAD_AGENT=mine", "PADRUN_VERSION=" + Version} {
		if !slices.Contains(env, want) {
			t.Errorf("env %v lacks %s", env, want)
		}
	}
	for _, kv := range env {
		if strings.HasPrefix(kv, "PADRUN_SESSION_FILE=") || strings.HasPrefix(kv, "PADRUN_MARKER=") || kv == "PAD_SESSION_PID=1" {
			t.Errorf("env keeps %s", kv)
		}
	}
	env = childEnv([]string{"PATH=/bin"}, 42, "wren", []string{"/w/a", "/w/b"})
	for _, want := range []string{"PAD_AGENT=wren", "PADRUN_SESSION_FILE=/w/a", "PADRUN_MARKER=/w/a.live.json"} {
		if !slices.Contains(env, want) {
			t.Errorf("env %v lacks %s", env, want)
		}
	}
}

func TestSessionPID_CanonicalPositiveDecimalOnly(t *testing.T) {
	for v, want := range map[string]int{"5": 5, "4242": 4242} {
		if got, err := EnvFrom([]string{"PAD_SESSION_PID=" + v}).SessionPID(); err != nil || got != want {
			t.Errorf("PAD_SESSION_PID=%q: %d, %v; want %d", v, got, err, want)
		}
	}
	for _, v := range []string{"+5", "05", " 5", "5 ", "5\n", "0", "-5", "0x10", "5_0", "", "x", "99999999999999999999"} {
		if got, err := EnvFrom([]string{"PAD_SESSION_PID=" + v}).SessionPID(); err == nil {
			t.Errorf("PAD_SESSION_PID=%q accepted as %d", v, got)
		}
	}
	if got, err := EnvFrom([]string{"PATH=/bin"}).SessionPID(); got != 0 || err != nil {
		t.Errorf("no PAD_SESSION_PID: %d, %v; want 0, nil", got, err)
	}
	// The first of a repeated variable counts, as os.Getenv finds it.
	if got, _ := EnvFrom([]string{"PAD_SESSION_PID=7", "PAD_SESSION_PID=8"}).SessionPID(); got != 7 {
		t.Errorf("repeated PAD_SESSION_PID: %d, want 7", got)
	}
}

// The companion's hook reads PAD_SESSION_PID by the run's rule: a
// non-canonical value names no session, even beside a socket spelled the
// same way.
func TestAskControl_SessionPIDByTheOneRule(t *testing.T) {
	dir := t.TempDir()
	for _, pid := range []string{"05", "+5", " 5"} {
		env := EnvFrom([]string{"PAD_SESSION_PID=" + pid, "PADRUN_CONTROL=" + filepath.Join(dir, pid+".sock")})
		if _, err := env.ControlClient().Ask(control.Request{Op: "claim"}); err == nil || !strings.Contains(err.Error(), "no control socket") {
			t.Errorf("PAD_SESSION_PID=%q: %v, want no control socket", pid, err)
		}
	}
	env := EnvFrom([]string{"PAD_SESSION_PID=5", "PADRUN_CONTROL=" + filepath.Join(dir, "5.sock")})
	if _, err := env.ControlClient().Ask(control.Request{Op: "claim"}); err == nil || !strings.Contains(err.Error(), "cannot reach padrun") {
		t.Errorf("PAD_SESSION_PID=5: %v, want cannot reach padrun", err)
	}
}
