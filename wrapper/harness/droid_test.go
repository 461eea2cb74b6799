package harness

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestDroid_Sessions(t *testing.T) {
	home, cwd := t.TempDir(), "/tmp/a/proj"
	sessions := filepath.Join(home, ".factory", "sessions")
	dir := filepath.Join(sessions, "-tmp-a-proj")
	other := filepath.Join(sessions, "-elsewhere")
	for _, f := range []string{filepath.Join(dir, "s1.jsonl"), filepath.Join(other, "s2.jsonl")} {
		if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env := Env{Getenv: func(string) string { return "" }, Cwd: cwd, Home: home}
	for _, c := range []struct {
		argv    []string
		file    string
		mode    string
		unknown bool
	}{
		{argv: []string{"droid", "--resume", "s1"}, file: filepath.Join(dir, "s1.jsonl"), mode: ModeInteractive},
		{argv: []string{"droid", "-r", "s2"}, file: filepath.Join(other, "s2.jsonl"), mode: ModeInteractive},
		{argv: []string{"droid", "resume", "s1"}, file: filepath.Join(dir, "s1.jsonl"), mode: ModeInteractive},
		{argv: []string{"droid", "resume", "s1", "--fork"}, mode: ModeInteractive},
		{argv: []string{"droid", "--fork", "s1"}, mode: ModeInteractive},
		{argv: []string{"droid", "exec", "-s", "s1", "-o", "json", "x"}, file: filepath.Join(dir, "s1.jsonl"), mode: ModeJSON},
		// exec's -r is its reasoning effort, not a resume.
		{argv: []string{"droid", "exec", "-r", "high", "x"}, mode: ModePrint},
		{argv: []string{"droid", "exec", "--input-format", "stream-json"}, mode: ModeRPC},
		{argv: []string{"droid", "-r"}, mode: ModeInteractive, unknown: true},
		{argv: []string{"droid", "resume", "--last"}, mode: ModeInteractive, unknown: true},
		{argv: []string{"droid", "-w", "x"}, mode: ModeInteractive, unknown: true},
		{argv: []string{"droid", "-r", "../x"}, mode: ModeInteractive, unknown: true},
		{argv: []string{"droid", "mcp", "list"}},
		{argv: []string{"droid", "fix mcp"}, mode: ModeInteractive},
	} {
		p := droid(c.argv, env)
		var file string
		if len(p.Files) == 1 {
			file = p.Files[0]
		}
		if file != c.file || p.Mode != c.mode || (p.Unknown != "") != c.unknown {
			t.Errorf("%q: file %q mode %q unknown %q, want %q %q %v", c.argv, file, p.Mode, p.Unknown, c.file, c.mode, c.unknown)
		}
	}
}

func TestDroid_Companion(t *testing.T) {
	for _, c := range []struct{ argv, want []string }{
		{[]string{"droid", "-r", "s"}, []string{"droid", "--settings", "F", "-r", "s"}},
		{[]string{"droid", "exec", "x"}, []string{"droid", "exec", "--settings", "F", "x"}},
		{[]string{"droid", "resume", "s"}, []string{"droid", "resume", "--settings", "F", "s"}},
	} {
		if got, ok := WithDroidCompanion(c.argv, "F"); !ok || !slices.Equal(got, c.want) {
			t.Errorf("%q: %q %v, want %q", c.argv, got, ok, c.want)
		}
	}
	if _, ok := WithDroidCompanion([]string{"droid", "--settings=mine.json"}, "F"); ok {
		t.Error("a --settings of the user's own is replaced")
	}
}

// FuzzDroidNames: droid's id test and folder names agree with the regular
// expressions they were written from (droid 0.225.2's own, for the folder).
func FuzzDroidNames(f *testing.F) {
	for _, s := range []string{"", "a", "-a", "a-b_c.d", "ab/c", "/home//me/", "//", "a b", "é", ".x", "0"} {
		f.Add(s)
	}
	id := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	slashes := regexp.MustCompile(`/+`)
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := droidID(s), id.MatchString(s); got != want {
			t.Fatalf("droidID(%q) = %v, want %v", s, got, want)
		}
		dir := strings.TrimLeft(strings.TrimRight(s, `\/`), "/")
		if got, want := droidProjectDir(s), "-"+slashes.ReplaceAllString(dir, "-"); got != want {
			t.Fatalf("droidProjectDir(%q) = %q, want %q", s, got, want)
		}
	})
}
