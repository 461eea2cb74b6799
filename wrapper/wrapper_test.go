package wrapper

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
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
	t.Setenv("PAD_AGENT", "env")
	if got, _ := resolveAgent("flag", deep, "pi"); got != "flag" {
		t.Errorf("--agent: got %q", got)
	}
	if got, _ := resolveAgent("", deep, "pi"); got != "env" {
		t.Errorf("$PAD_AGENT: got %q", got)
	}
	os.WriteFile(filepath.Join(dir, "a", ".pad.toml"), []byte("agent_name = \"toml\"\n"), 0o600)
	if got, _ := resolveAgent("", deep, "pi"); got != "toml" {
		t.Errorf(".pad.toml: got %q", got)
	}
	os.Remove(filepath.Join(dir, "a", ".pad.toml"))
	t.Setenv("PAD_AGENT", "")
	if got, _ := resolveAgent("", deep, "claude"); got != "claude-code" {
		t.Errorf("harness: got %q", got)
	}
	if got, _ := resolveAgent("", deep, "none"); got != "" {
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

func TestParentSession_CanonicalPositiveDecimalOnly(t *testing.T) {
	for v, want := range map[string]int{"5": 5, "4242": 4242} {
		t.Setenv("PAD_SESSION_PID", v)
		if got, err := parentSession(); err != nil || got != want {
			t.Errorf("PAD_SESSION_PID=%q: %d, %v; want %d", v, got, err, want)
		}
	}
	for _, v := range []string{"+5", "05", " 5", "5 ", "5\n", "0", "-5", "0x10", "5_0", "", "x", "99999999999999999999"} {
		t.Setenv("PAD_SESSION_PID", v)
		if got, err := parentSession(); err == nil {
			t.Errorf("PAD_SESSION_PID=%q accepted as %d", v, got)
		}
	}
}
