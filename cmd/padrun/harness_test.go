//go:build linux

package main

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestTerminal runs padrun at a real terminal, under tmux.
func TestTerminal(t *testing.T) {
	requireTool(t, "tmux")
	testscript.Run(t, params("testdata/terminal"))
}

// procstate FILE:KEY STATES waits (at most 30s) until the recorded pid is
// in one of STATES (letters of /proc/PID/stat: S, R, T, ...).
func cmdProcstate(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: procstate FILE:KEY STATES")
	}
	pid := readyPid(ts, args[0])
	state := ""
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			ts.Fatalf("pid %d is gone", pid)
		}
		s := string(b)
		state = strings.Fields(s[strings.LastIndex(s, ")")+1:])[0]
		if strings.Contains(args[1], state) {
			return
		}
	}
	ts.Fatalf("pid %d is in state %s, want one of %s", pid, state, args[1])
}

// delivered FILE:KEY SIG waits (at most 30s) until SIG is pending neither
// for the recorded process nor for any of its threads: it has reached a
// handler, so a signal sent after it is handled after it.
func cmdDelivered(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: delivered FILE:KEY SIG")
	}
	pid := readyPid(ts, args[0])
	bit := uint64(1) << (sigByName(args[1]) - 1)
	pending := func() bool {
		files, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
		for _, f := range append(files, fmt.Sprintf("/proc/%d/status", pid)) {
			b, err := os.ReadFile(f)
			if err != nil {
				continue // a thread that ended
			}
			for _, line := range strings.Split(string(b), "\n") {
				key, v, _ := strings.Cut(line, ":")
				if key != "SigPnd" && key != "ShdPnd" {
					continue
				}
				if mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64); err == nil && mask&bit != 0 {
					return true
				}
			}
		}
		return false
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if !pending() {
			return
		}
	}
	ts.Fatalf("%s is still pending for pid %d", args[1], pid)
}

// TestHarnesses runs the real harnesses under padrun against a fake model
// server on 127.0.0.1, once for each column of pinned versions: every
// script runs against the oldest supported releases and the newest.
func TestHarnesses(t *testing.T) {
	cols := requireColumns(t)
	requireTool(t, "tmux")
	for _, c := range cols {
		// One column after the other: the scripts of a column already run
		// side by side, and both columns at once on two cores starved the
		// harnesses' own timing (copilot 1.0.40's lock-to-append margin).
		t.Run(c.name, func(t *testing.T) {
			p := params("testdata/harness")
			setup := p.Setup
			p.Setup = func(env *testscript.Env) error {
				c.setup(env.Setenv)
				countWarnings(env)
				return setup(env)
			}
			p.Condition = c.condition
			testscript.Run(t, p)
		})
	}
}

// fakemodel starts the fake model server for this script and points every
// harness at it: pi's models.json and settings.json, Claude's environment,
// codex's config.toml, gemini's and qwen's settings.json with their
// environment, copilot's offline provider. Every harness gets a home of
// its own in $WORK (gemini-home/.gemini, qwen-home, copilot-home); copilot
// runs the package its column unpacked (COPILOT_CACHE_HOME). opencode and
// kilo read one opencode.json (OPENCODE_CONFIG, KILO_CONFIG: the "fake"
// provider, @ai-sdk/openai-compatible with the server's baseURL) and keep
// their databases in $XDG_DATA_HOME/opencode/opencode.db and
// $XDG_DATA_HOME/kilo/kilo.db: the XDG folders are the defaults under the
// script's HOME, set so that scripts can name them. The column's
// harnesses and Node.js come first in PATH.
func cmdFakeModel(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: fakemodel")
	}
	work := ts.Getenv("WORK")
	m, err := startFakeModel(work, filepath.Join(work, "model.log"))
	ts.Check(err)
	ts.Defer(m.Close)
	env, err := fakeModelEnv(m, work, ts.Getenv("HOME"), ts.Getenv("HARNESS_DIR"))
	ts.Check(err)
	env["PATH"] = ts.Getenv("HARNESS_BIN") + string(filepath.ListSeparator) + ts.Getenv("PATH")
	for k, v := range env {
		setenv(ts, k, v)
	}
}

// fakeModelEnv writes every harness's configuration for the fake model m
// into work (and home, which it makes) and returns the environment that
// points them at it; harnessDir is the column's folder.
func fakeModelEnv(m *fakeModel, work, home, harnessDir string) (map[string]string, error) {
	agent := filepath.Join(work, "pi-agent")
	codexHome := filepath.Join(work, "codex-home")
	geminiDir := filepath.Join(work, "gemini-home", ".gemini")
	qwenHome := filepath.Join(work, "qwen-home")
	ocConfig := filepath.Join(work, "opencode-config", "opencode.json")
	for _, d := range []string{agent, codexHome, filepath.Join(work, "claude-config"), geminiDir, qwenHome, filepath.Join(work, "copilot-home"),
		filepath.Dir(ocConfig), home, filepath.Join(home, ".omp", "agent")} { // qwen and gemini fail in a home that does not exist
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	models := `{"providers":{"fake":{"baseUrl":"` + m.URL + `/v1","api":"openai-completions","apiKey":"fake-key","compat":{"supportsDeveloperRole":false,"supportsReasoningEffort":false},"models":[{"id":"fake-model","contextWindow":128000,"maxTokens":4096}]}}}`
	settings := `{"defaultProvider":"fake","defaultModel":"fake-model","quietStartup":true,"enableInstallTelemetry":false,"retry":{"enabled":false}}`
	codexConfig := fmt.Sprintf("model = \"fake-model\"\nmodel_provider = \"fake\"\n\n[model_providers.fake]\nname = \"fake\"\nbase_url = \"%s/v1\"\nwire_api = \"responses\"\nenv_key = \"FAKE_KEY\"\n", m.URL)
	// gemini: an API key with GOOGLE_GEMINI_BASE_URL (the "gateway" auth
	// that the URL alone selects is refused in print mode); no telemetry,
	// no update check.
	geminiSettings := `{"security":{"auth":{"selectedType":"gemini-api-key"}},"telemetry":{"enabled":false},"privacy":{"usageStatisticsEnabled":false},"general":{"enableAutoUpdate":false,"enableAutoUpdateNotification":false}}`
	qwenSettings := `{"security":{"auth":{"selectedType":"openai"}},"model":{"name":"fake-model"},"telemetry":{"enabled":false},"privacy":{"usageStatisticsEnabled":false},"general":{"enableAutoUpdate":false}}`
	oc := `{"$schema":"https://opencode.ai/config.json","provider":{"fake":{"npm":"@ai-sdk/openai-compatible","name":"Fake","options":{"baseURL":"` + m.URL + `/v1","apiKey":"fake-key"},"models":{"fake-model":{"name":"fake-model"}}}},"model":"fake/fake-model","small_model":"fake/fake-model","autoupdate":false,"share":"disabled"}`
	// cline: its openai-compatible provider, in ~/.cline's data folder;
	// a --data-dir of a script gets a copy ($CLINE_PROVIDERS) in its
	// settings folder.
	clineProviders := filepath.Join(home, ".cline", "data", "settings", "providers.json")
	if err := os.MkdirAll(filepath.Dir(clineProviders), 0o700); err != nil {
		return nil, err
	}
	cl := `{"version":1,"lastUsedProvider":"openai-compatible","modes":{},"providers":{"openai-compatible":{"settings":{"provider":"openai-compatible","apiKey":"fake","model":"fake-model","baseUrl":"` + m.URL + `/v1"},"updatedAt":"2026-01-01T00:00:00.000Z","tokenSource":"manual"}}}`
	for path, content := range map[string]string{
		clineProviders: cl, filepath.Join(agent, "models.json"): models, filepath.Join(agent, "settings.json"): settings,
		filepath.Join(codexHome, "config.toml"): codexConfig, filepath.Join(geminiDir, "settings.json"): geminiSettings,
		filepath.Join(qwenHome, "settings.json"): qwenSettings, ocConfig: oc,
		// omp's default agent folder (a script unsets PI_CODING_AGENT_DIR,
		// which omp reads too): pi's models.json, which omp reads.
		filepath.Join(home, ".omp", "agent", "models.json"): models,
	} {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			return nil, err
		}
	}
	env := map[string]string{
		"MODEL_URL": m.URL, "PI_CODING_AGENT_DIR": agent, "PI_OFFLINE": "1", "PI_TELEMETRY": "0",
		"ANTHROPIC_BASE_URL": m.URL, "ANTHROPIC_API_KEY": "sk-ant-fake", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
		"DISABLE_TELEMETRY": "1", "CLAUDE_CONFIG_DIR": filepath.Join(work, "claude-config"),
		"CODEX_HOME": codexHome, "FAKE_KEY": "fake", "TERM": "xterm-256color",
		"GEMINI_CLI_HOME": filepath.Dir(geminiDir), "GOOGLE_GEMINI_BASE_URL": m.URL, "GEMINI_API_KEY": "fake",
		"GEMINI_CLI_TRUST_WORKSPACE": "true", "QWEN_HOME": qwenHome, "OPENAI_BASE_URL": m.URL + "/v1", "OPENAI_API_KEY": "fake", "OPENAI_MODEL": "fake-model",
		"COPILOT_HOME": filepath.Join(work, "copilot-home"), "COPILOT_OFFLINE": "true", "COPILOT_PROVIDER_BASE_URL": m.URL + "/v1",
		"COPILOT_MODEL": "fake-model", "COPILOT_AUTO_UPDATE": "false", "COPILOT_CACHE_HOME": filepath.Join(harnessDir, "copilot-cache"),
		// opencode and kilo: no models.dev fetch, no update check, no
		// share, no LSP download; kilo's own API (its model list) and the
		// npm registry that opencode installs @opencode-ai/plugin from into
		// its config folder both point at the fake server, which refuses
		// them: nothing leaves the machine.
		"KILO_API_URL": m.URL, "KILO_TELEMETRY_LEVEL": "off", "KILO_DISABLE_SESSION_INGEST": "1", "KILO_DISABLE_PRESENCE": "1",
		"KILO_DISABLE_CODEBASE_INDEXING": "1", "NPM_CONFIG_REGISTRY": m.URL + "/npm/",
		"XDG_DATA_HOME": filepath.Join(home, ".local", "share"), "XDG_CONFIG_HOME": filepath.Join(home, ".config"),
		"XDG_CACHE_HOME": filepath.Join(home, ".cache"), "XDG_STATE_HOME": filepath.Join(home, ".local", "state"),
		"CLINE_PROVIDERS": clineProviders,
	}
	if err := droidFakeModel(m, work, env); err != nil {
		return nil, err
	}
	for _, p := range []string{"OPENCODE", "KILO"} {
		env[p+"_CONFIG"] = ocConfig
		for _, flag := range []string{"DISABLE_MODELS_FETCH", "DISABLE_AUTOUPDATE", "DISABLE_SHARE", "DISABLE_LSP_DOWNLOAD"} {
			env[p+"_"+flag] = "1"
		}
	}
	return env, nil
}

// driveRPC is a client of pi's RPC mode: it sends one prompt, copies every
// event to sink, asks for the state after agent_end, and closes stdin once
// the state has come back, since EOF on stdin ends pi at once.
func driveRPC(in io.WriteCloser, out io.Reader, sink io.Writer, prompt string, done chan struct{}) {
	defer close(done)
	send := func(v any) {
		b, _ := json.Marshal(v)
		in.Write(append(b, '\n'))
	}
	send(map[string]string{"type": "prompt", "message": prompt})
	r := bufio.NewReader(out)
	for {
		line, err := r.ReadBytes('\n')
		sink.Write(line)
		switch {
		case bytes.Contains(line, []byte(`"type":"agent_end"`)):
			send(map[string]string{"type": "get_state"})
		case bytes.Contains(line, []byte(`"command":"get_state"`)):
			in.Close()
		}
		if err != nil {
			in.Close()
			io.Copy(sink, r)
			return
		}
	}
}

// watchPane polls a tmux pane for at most within until whether it matches
// pattern is want; it returns the pane's last text and whether it came.
func watchPane(ts *testscript.TestScript, sock, target, pattern string, want bool, within time.Duration) ([]byte, bool) {
	re, err := regexp.Compile("(?m)" + pattern)
	ts.Check(err)
	var text []byte
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		text, _ = exec.Command("tmux", "-S", ts.MkAbs(sock), "capture-pane", "-p", "-t", target).Output()
		if re.Match(text) == want {
			return text, true
		}
	}
	return text, false
}

// keysuntil SOCKET TARGET KEY... PATTERN sends the keys to a tmux pane, in
// one send-keys, until the pane matches PATTERN: again after each 3 s
// without a match, for at most a minute. For a key that a program drops
// while it loads (a picker), and that does no harm sent twice; keys that
// count only together (gemini's double Ctrl+C, within 3 s) go in one call.
func cmdKeysuntil(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 4 {
		ts.Fatalf("usage: keysuntil SOCKET TARGET KEY... PATTERN")
	}
	sock, target, keys, pattern := args[0], args[1], args[2:len(args)-1], args[len(args)-1]
	send := append([]string{"-S", ts.MkAbs(sock), "send-keys", "-t", target}, keys...)
	var text []byte
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
		ts.Check(exec.Command("tmux", send...).Run())
		var ok bool
		if text, ok = watchPane(ts, sock, target, pattern, true, 3*time.Second); ok {
			return
		}
	}
	ts.Fatalf("pane %s never matched %s; it shows:\n%s", target, pattern, text)
}

// typein SOCKET TARGET TEXT PATTERN types TEXT into a tmux pane one
// character at a time, each once the pane shows the text typed so far:
// PATTERN with %s replaced by it (regexp-quoted), within 30 s each. For an
// input that drops keys which reach it together while it renders (droid's
// session filter under load showed "relse-h" for release-h): one key in
// flight at a time leaves it nothing to drop.
func cmdTypein(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 4 || strings.Count(args[3], "%s") != 1 {
		ts.Fatalf("usage: typein SOCKET TARGET TEXT PATTERN (PATTERN with one %%s)")
	}
	sock, target, text, pattern := args[0], args[1], args[2], args[3]
	for i, r := range text {
		ts.Check(exec.Command("tmux", "-S", ts.MkAbs(sock), "send-keys", "-t", target, "-l", string(r)).Run())
		typed := text[:i+len(string(r))]
		if pane, ok := watchPane(ts, sock, target, fmt.Sprintf(pattern, regexp.QuoteMeta(typed)), true, 30*time.Second); !ok {
			ts.Fatalf("pane %s never showed %q typed; it shows:\n%s", target, typed, pane)
		}
	}
}

// keysuntilgrep SOCKET TARGET KEY FILE PATTERN sends KEY to a tmux pane
// until a line of FILE matches PATTERN: again after each 5 s without one,
// for at most two minutes. For the Enter that submits a typed turn, which a
// TUI may drop while it still takes the typing in (cline 3.0's), and which
// an empty input ignores: FILE is the model's log, or the session's file.
func cmdKeysuntilGrep(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 5 {
		ts.Fatalf("usage: keysuntilgrep SOCKET TARGET KEY FILE PATTERN")
	}
	re, err := regexp.Compile("(?m)" + args[4])
	ts.Check(err)
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); {
		ts.Check(exec.Command("tmux", "-S", ts.MkAbs(args[0]), "send-keys", "-t", args[1], args[2]).Run())
		for next := time.Now().Add(5 * time.Second); time.Now().Before(next); time.Sleep(20 * time.Millisecond) {
			if b, err := os.ReadFile(ts.MkAbs(args[3])); err == nil && re.Match(b) {
				return
			}
		}
	}
	pane, _ := exec.Command("tmux", "-S", ts.MkAbs(args[0]), "capture-pane", "-p", "-t", args[1]).Output()
	b, _ := os.ReadFile(ts.MkAbs(args[3]))
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	ts.Fatalf("no line of %s matched %s within 2m0s of sending %s; pane %s shows:\n%s\nthe last lines of %s:\n%s",
		args[3], args[4], args[2], args[1], pane, args[3], strings.Join(lines[max(0, len(lines)-20):], "\n"))
}

// forks FILE N checks that a pi session file's tree has N forks: entries
// with more than one child.
func cmdForks(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: forks FILE N")
	}
	children := map[string]int{}
	entries := 0
	for _, line := range strings.Split(strings.TrimSpace(ts.ReadFile(args[0])), "\n") {
		var e struct {
			Type     string  `json:"type"`
			ID       string  `json:"id"`
			ParentID *string `json:"parentId"`
		}
		ts.Check(json.Unmarshal([]byte(line), &e))
		if e.Type == "session" {
			continue
		}
		entries++
		if e.ParentID != nil {
			children[*e.ParentID]++
		}
	}
	forks := 0
	for _, n := range children {
		if n > 1 {
			forks++
		}
	}
	if strconv.Itoa(forks) != args[1] {
		ts.Fatalf("%s has %d forks among %d entries, want %s", args[0], forks, entries, args[1])
	}
}

// volatile matches what differs between two runs of the same harness
// command: timestamps, ids, durations.
var volatile = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z|\b\d{13}\b|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|"(id|parentId|leafId|toolCallId|responseId)":"[^"]*"|"durationMs":\d+`)

// normcmp A B compares two outputs byte for byte once timestamps and ids
// are masked.
func cmdNormcmp(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: normcmp A B")
	}
	a := volatile.ReplaceAllString(ts.ReadFile(args[0]), "X")
	b := volatile.ReplaceAllString(ts.ReadFile(args[1]), "X")
	if a == "" {
		ts.Fatalf("%s is empty", args[0])
	}
	if a != b {
		ts.Fatalf("%s and %s differ:\n%s\n---\n%s", args[0], args[1], a, b)
	}
}

// newest VAR DIR PATTERN sets VAR to the newest file in DIR (searched
// recursively) whose name matches PATTERN.
func cmdNewest(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: newest VAR DIR PATTERN")
	}
	best, bestTime := "", time.Time{}
	filepath.WalkDir(ts.MkAbs(args[1]), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if ok, _ := filepath.Match(args[2], d.Name()); ok {
			if fi, err := d.Info(); err == nil && fi.ModTime().After(bestTime) {
				best, bestTime = path, fi.ModTime()
			}
		}
		return nil
	})
	if best == "" {
		ts.Fatalf("no %s in %s", args[2], args[1])
	}
	setenv(ts, args[0], best)
}

// headerid VAR FILE sets VAR to the session id in a session file's first
// line (pi: "id"; codex: "payload.id"; gemini: "sessionId").
func cmdHeaderID(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: headerid VAR FILE")
	}
	var h struct {
		ID        string `json:"id"`
		SessionID string `json:"sessionId"` // qwen's and gemini's records
		Payload   struct {
			ID string `json:"id"`
		} `json:"payload"`
	}
	first, _, _ := strings.Cut(ts.ReadFile(args[1]), "\n")
	ts.Check(json.Unmarshal([]byte(first), &h))
	id := cmp.Or(h.ID, h.Payload.ID, h.SessionID)
	if id == "" {
		id = h.SessionID
	}
	if id == "" {
		ts.Fatalf("%s has no session id", args[1])
	}
	setenv(ts, args[0], id)
}

// jsonget VAR FILE KEY sets VAR to a top-level string or number of a JSON
// file.
func cmdJSONGet(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: jsonget VAR FILE KEY")
	}
	var v string
	switch x := readJSON(ts, args[1])[args[2]].(type) {
	case string:
		v = x
	case float64:
		v = strconv.FormatFloat(x, 'f', -1, 64)
	}
	if v == "" {
		ts.Fatalf("%s has no string or number %s", args[1], args[2])
	}
	setenv(ts, args[0], v)
}

// droidFakeModel points Factory droid at m: a custom model (OpenAI chat
// completions) in $WORK/factory-home/.factory/settings.json, its default,
// in airgap mode (no call to Factory's API).
func droidFakeModel(m *fakeModel, work string, env map[string]string) error {
	home := filepath.Join(work, "factory-home")
	if err := os.MkdirAll(filepath.Join(home, ".factory"), 0o700); err != nil {
		return err
	}
	settings := `{"customModels":[{"model":"fake-model","displayName":"fake","baseUrl":"` + m.URL + `/v1","apiKey":"fake-key",` +
		`"provider":"generic-chat-completion-api","maxOutputTokens":4096}],"sessionDefaultSettings":{"model":"custom:fake-0"}}`
	env["FACTORY_HOME_OVERRIDE"], env["FACTORY_AIRGAP_ENABLED"] = home, "1"
	env["FACTORY_DROID_AUTO_UPDATE_ENABLED"] = "false"
	return os.WriteFile(filepath.Join(home, ".factory", "settings.json"), []byte(settings), 0o600)
}
