package harness

import (
	"strings"
	"testing"
	"time"
)

// Every adapter takes any argv without panicking, keeps argv[0], and never
// drops an argument unless it pins one.
func fuzzAdapter(f *testing.F, name string, seeds ...string) {
	for _, s := range seeds {
		f.Add(s)
	}
	home := f.TempDir()
	f.Fuzz(func(t *testing.T, line string) {
		argv := append([]string{name}, strings.Split(line, "\x00")...)
		env := Env{Getenv: func(string) string { return "" }, Cwd: "/w/p", Home: home, Now: time.Unix(0, 0)}
		for _, noPin := range []bool{false, true} {
			env.NoPin = noPin
			p, err := Resolve(name, argv, env)
			if err != nil {
				t.Fatal(err)
			}
			if p.Argv[0] != name {
				t.Fatalf("argv[0] changed: %q", p.Argv)
			}
			if noPin && strings.Join(p.Argv, "\x00") != strings.Join(argv, "\x00") {
				t.Fatalf("--no-pin changed argv: %q -> %q", argv, p.Argv)
			}
			if len(p.Argv) < len(argv) {
				t.Fatalf("arguments dropped: %q -> %q", argv, p.Argv)
			}
			for _, f := range p.Files {
				if !strings.HasPrefix(f, "/") {
					t.Fatalf("relative session file %q", f)
				}
			}
		}
	})
}

func FuzzPi(f *testing.F) {
	fuzzAdapter(f, "pi", "-p\x00hi", "--session\x00s.jsonl", "-c", "--session=x", "--fork\x00a", "--mode\x00rpc", "-r", "--plan\x00x\x00-c")
}

func FuzzClaude(f *testing.F) {
	fuzzAdapter(f, "claude", "-p\x00hi", "-r", "-r\x0011111111-1111-4111-8111-111111111111", "-c", "--session-id=x", "--add-dir\x00a\x00b")
}

func FuzzCodex(f *testing.F) {
	fuzzAdapter(f, "codex", "exec\x00hi", "resume\x00--last", "exec\x00resume\x00id", "-c\x00resume", "--ephemeral")
}
