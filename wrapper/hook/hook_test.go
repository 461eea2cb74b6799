package hook

import (
	"encoding/json"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/padrun/padrun/wrapper/control"
)

// unreachable is a session whose padrun is gone: its socket is named for
// it and absent. The harness is stood in for by ended.
func unreachable(t *testing.T) (control.Client, string, *int) {
	t.Helper()
	ended := 0
	endHarness = func(session int) { ended = session }
	t.Cleanup(func() { endHarness = stopHarness })
	dir := t.TempDir()
	c := control.Client{Socket: control.Path(dir, 4242), SessionPID: 4242}
	in := `{"session_id":"a1","transcript_path":"` + filepath.ToSlash(filepath.Join(dir, "a.jsonl")) + `","hook_event_name":"SessionStart","source":"clear"}`
	return c, in, &ended
}

// padrun unreachable: the hook ends the harness itself, before it writes.
func TestClaude_Unreachable_EndsTheHarness(t *testing.T) {
	c, in, ended := unreachable(t)
	var stderr strings.Builder
	if code := Claude("claude", strings.NewReader(in), &stderr, c); code != 2 || *ended != 4242 || !strings.Contains(stderr.String(), "cannot reach padrun") {
		t.Errorf("unreachable: exit %d, ended %d, stderr %q", code, *ended, stderr.String())
	}
}

// gemini reads a decision only from a hook that succeeded: unreachable,
// the hook exits 0 with a block, and ends gemini itself.
func TestGemini_Unreachable_BlocksAndEndsGemini(t *testing.T) {
	c, in, ended := unreachable(t)
	var stdout, stderr strings.Builder
	code := Gemini("BeforeAgent", strings.NewReader(in), &stdout, &stderr, c)
	var out struct {
		Decision string `json:"decision"`
		Continue *bool  `json:"continue"`
		Reason   string `json:"reason"`
	}
	if err := json.Unmarshal([]byte(stdout.String()), &out); err != nil {
		t.Fatalf("stdout %q: %v", stdout.String(), err)
	}
	if code != 0 || *ended != 4242 || out.Decision != "block" || out.Continue == nil || *out.Continue || !strings.Contains(out.Reason, "cannot reach padrun") {
		t.Errorf("unreachable: exit %d, ended %d, stdout %q", code, *ended, stdout.String())
	}
	if !strings.Contains(stderr.String(), "padrun: hint: ") {
		t.Errorf("no hint on stderr: %q", stderr.String())
	}
}

// The hooks run in the harness's process, not in the run: they and the
// protocol they speak import nothing of the run (package wrapper), only
// the control socket's client and what that needs.
func TestHook_ImportsNothingOfTheRun(t *testing.T) {
	for _, dir := range []string{".", "../control"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: %v %v", dir, files, err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, im := range src.Imports {
				p, _ := strconv.Unquote(im.Path.Value)
				if p == "github.com/padrun/padrun/wrapper" || strings.HasPrefix(p, "github.com/padrun/padrun/wrapper/") && p != "github.com/padrun/padrun/wrapper/control" {
					t.Errorf("%s imports %s: a hook reaches the run only through the control socket", f, p)
				}
			}
		}
	}
}
