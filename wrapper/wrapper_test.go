package wrapper

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/padrun/padrun/marker"
	"github.com/padrun/padrun/marker/ident"
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
		if got, _ := padTOMLAgent(path); got != want {
			t.Errorf("%q: agent %q, want %q", body, got, want)
		}
	}
}

func TestResolveAgent_Order(t *testing.T) {
	dir := t.TempDir()
	deep := filepath.Join(dir, "a", "b")
	os.MkdirAll(deep, 0o700)
	t.Setenv("PAD_AGENT", "env")
	if got := resolveAgent("flag", deep, "pi"); got != "flag" {
		t.Errorf("--agent: got %q", got)
	}
	if got := resolveAgent("", deep, "pi"); got != "env" {
		t.Errorf("$PAD_AGENT: got %q", got)
	}
	os.WriteFile(filepath.Join(dir, "a", ".pad.toml"), []byte("agent_name = \"toml\"\n"), 0o600)
	if got := resolveAgent("", deep, "pi"); got != "toml" {
		t.Errorf(".pad.toml: got %q", got)
	}
	os.Remove(filepath.Join(dir, "a", ".pad.toml"))
	t.Setenv("PAD_AGENT", "")
	if got := resolveAgent("", deep, "claude"); got != "claude-code" {
		t.Errorf("harness: got %q", got)
	}
	if got := resolveAgent("", deep, "none"); got != "" {
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

func TestRefusal_Text(t *testing.T) {
	now := time.Date(2026, 11, 30, 8, 12, 1, 0, time.UTC)
	m := &marker.Marker{Tool: "padrun", Pid: 1234, ChildPid: 1235, Harness: "pi", Agent: "wren", Hostname: "box", CreatedAt: "2026-11-30T08:00:01.000Z"}
	e := &marker.HeldError{File: "/w/s.jsonl", Holder: m, Busy: true, Waitable: true,
		Judgement: marker.Judgement{Verdict: ident.Alive, Reason: "pid 1234 start time matches, same boot, same machine"}}
	queue := []string{"padrun", "--wait", "10m", "--", "pi", "-p", "--session", "/w/s.jsonl", "it's done?"}
	got := strings.Join(Refusal(e, now, queue), "\n")
	since := time.Date(2026, 11, 30, 8, 0, 1, 0, time.UTC).Local().Format("15:04:05")
	want := `refused: /w/s.jsonl is in use by another session
  holder: padrun pid 1234 (child pi pid 1235, agent "wren") on host box, since ` + since + ` (12m ago)
  verdict: alive: pid 1234 start time matches, same boot, same machine
hint: fork it instead (pi --fork /w/s.jsonl), or queue: padrun --wait 10m -- pi -p --session /w/s.jsonl 'it'\''s done?'`
	if got != want {
		t.Fatalf("refusal:\n%s\nwant:\n%s", got, want)
	}
	got = strings.Join(Refusal(&WaitedError{HeldError: e, Waited: 90 * time.Second}, now, queue), "\n")
	if want := `hint: waited 1m30s for padrun pid 1234 (agent "wren"), which still holds it; look at it with: padrun status /w/s.jsonl`; !strings.HasSuffix(got, "\n"+want) {
		t.Fatalf("refusal after --wait:\n%s\nwant it to end:\n%s", got, want)
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
