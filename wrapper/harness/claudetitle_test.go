package harness

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestClaude_ResumeByTitle(t *testing.T) {
	f := newFixture(t)
	const (
		titled  = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
		renamed = "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb"
		aiOnly  = "cccccccc-cccc-4ccc-8ccc-cccccccccccc"
		twin1   = "dddddddd-dddd-4ddd-8ddd-dddddddddddd"
		twin2   = "eeeeeeee-eeee-4eee-8eee-eeeeeeeeeeee"
	)
	for id, body := range map[string]string{
		titled:  `{"type":"user"}` + "\n" + `{"type":"custom-title","customTitle":"Old","sessionId":"x"}` + "\n" + `{"type":"custom-title","customTitle":"My Title","sessionId":"x"}`,
		renamed: `{"type":"ai-title","aiTitle":"Other","sessionId":"x"}` + "\n" + `{"type":"custom-title","customTitle":"Renamed","sessionId":"x"}`,
		aiOnly:  `{"type":"ai-title","aiTitle":"Only AI","sessionId":"x"}`,
		twin1:   `{"type":"custom-title","customTitle":"Twin","sessionId":"x"}`,
		twin2:   `{"type":"custom-title","customTitle":"twin","sessionId":"x"}`,
	} {
		if err := os.WriteFile(filepath.Join(f.claudeDir, id+".jsonl"), []byte(body+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	file := func(id string) string { return filepath.Join(f.claudeDir, id+".jsonl") }
	tests := []struct {
		name    string
		argv    []string
		noPin   bool
		files   []string
		argvOut []string
		unknown bool
	}{
		{name: "title, any case and spaces", argv: []string{"claude", "-p", "-r", " my title ", "go"}, files: []string{file(titled)},
			argvOut: []string{"claude", "-p", "--resume", titled, "go"}},
		{name: "=form", argv: []string{"claude", "--resume= my title", "-p"}, files: []string{file(titled)}, argvOut: []string{"claude", "--resume", titled, "-p"}},
		{name: "no-pin guards and leaves argv", argv: []string{"claude", "-p", "-r", "My Title"}, noPin: true, files: []string{file(titled)},
			argvOut: []string{"claude", "-p", "-r", "My Title"}},
		{name: "an older custom title is not the title", argv: []string{"claude", "-p", "-r", "Old"}, unknown: true},
		{name: "a custom title hides the generated one", argv: []string{"claude", "-p", "-r", "Other"}, unknown: true},
		{name: "generated title", argv: []string{"claude", "-p", "-r", "only ai"}, files: []string{file(aiOnly)}, argvOut: []string{"claude", "-p", "--resume", aiOnly}},
		{name: "two sessions with one title", argv: []string{"claude", "-p", "-r", "TWIN"}, unknown: true},
		{name: "not a substring match", argv: []string{"claude", "-p", "-r", "Title"}, unknown: true},
		{name: "interactive -r with a word is the picker", argv: []string{"claude", "-r", "My Title"}},
		{name: "--bg is the daemon's, argv untouched", argv: []string{"claude", "--bg", "-p", "hi"}, argvOut: []string{"claude", "--bg", "-p", "hi"}, unknown: true},
		{name: "--background with a session id", argv: []string{"claude", "--background", "--session-id", titled}, argvOut: []string{"claude", "--background", "--session-id", titled}, unknown: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := f.env
			env.NoPin = tt.noPin
			p, err := Resolve("", tt.argv, env)
			if err != nil {
				t.Fatal(err)
			}
			if (p.Unknown != "") != tt.unknown || !slices.Equal(p.Files, tt.files) {
				t.Fatalf("files %v unknown %q; want %v unknown %v", p.Files, p.Unknown, tt.files, tt.unknown)
			}
			if tt.argvOut != nil && !slices.Equal(p.Argv, tt.argvOut) {
				t.Errorf("argv %q, want %q", p.Argv, tt.argvOut)
			}
		})
	}
}
