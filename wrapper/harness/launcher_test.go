package harness

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestSplitLauncher(t *testing.T) {
	for _, tc := range []struct{ argv, launcher, args string }{
		{"pi -p x", "", "pi -p x"},
		{"sh -c x", "", "sh -c x"},
		{"node /p/dist/cli.js -p x", "node", "/p/dist/cli.js -p x"},
		{"/usr/bin/nodejs cli.js -e ext", "/usr/bin/nodejs", "cli.js -e ext"},
		{"node --require r.js -C dev --import=i.mjs --no-warnings cli.js -p", "node --require r.js -C dev --import=i.mjs --no-warnings", "cli.js -p"},
		{"node -r r.js --max-old-space-size=4096 --inspect cli.js", "node -r r.js --max-old-space-size=4096 --inspect", "cli.js"},
		{"node -- cli.js -e x", "node --", "cli.js -e x"},
		{"bun run /p/cli.js -p", "bun run", "/p/cli.js -p"},
		{"bun --smol cli.ts x", "bun --smol", "cli.ts x"},
		{"bun --preload p.ts ./cli -p", "bun --preload p.ts", "./cli -p"},
	} {
		l, a, err := SplitLauncher("pi", strings.Fields(tc.argv))
		if err != nil || strings.Join(l, " ") != tc.launcher || strings.Join(a, " ") != tc.args {
			t.Errorf("%s: launcher %q, args %q, %v; want %q, %q", tc.argv, l, a, err, tc.launcher, tc.args)
		}
	}
}

func TestSplitLauncher_UnreadableIsRefused(t *testing.T) {
	for _, argv := range []string{
		"node", "node -e code", "node --eval=code cli.js", "node -p 1", "node -", "node --input-type=module cli.js",
		"node --no-such-option cli.js", "node -r", "node --", "node -i", "node --test cli.js", "bun x pi", "bun install",
		"nodejs --check cli.js",
	} {
		_, _, err := SplitLauncher("pi", strings.Fields(argv))
		var le *LauncherError
		if !errors.As(err, &le) {
			t.Errorf("%s: %v, want a LauncherError", argv, err)
			continue
		}
		if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, "padrun --harness pi -- ") {
			t.Errorf("%s: %q", argv, msg)
		}
	}
}

// The harness's rules apply to its arguments, and the companion lands after
// the script, with the launcher put back in front.
func TestResolve_Launcher_CompanionAfterTheScript(t *testing.T) {
	p, err := Resolve("pi", strings.Fields("node -r pre.js /p/cli.js --session-dir /sd -c -p x"), Env{Cwd: "/w", Home: "/h"})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Watch) != 1 || p.Watch[0].Dir != "/sd" || p.Mode != ModePrint {
		t.Errorf("plan %+v", p)
	}
	out, ok := CompanionOf(p).Argv(p.Argv, Load{Script: "/c/pi.js"})
	if want := strings.Fields("node -r pre.js /p/cli.js -e /c/pi.js"); !ok || !slices.Equal(out[:len(want)], want) {
		t.Errorf("argv %q", out)
	}
	p, err = Resolve("claude", strings.Fields("node cli.js -p x"), Env{Cwd: "/w", Home: "/h"})
	if err != nil || Companion(p) != "claude" {
		t.Fatalf("%+v %v", p, err)
	}
	out, ok = CompanionOf(p).Argv(p.Argv, Load{Hook: "h"})
	if !ok || !slices.Equal(out[:3], []string{"node", "cli.js", "--settings"}) || !slices.Equal(out[len(out)-2:], []string{"-p", "x"}) {
		t.Errorf("argv %q", out)
	}
	if _, err := Resolve("pi", strings.Fields("node -e x cli.js -p x"), Env{Cwd: "/w", Home: "/h"}); err == nil {
		t.Error("node -e: no error")
	}
	if p, err := Resolve(None, strings.Fields("node -e x"), Env{Cwd: "/w", Home: "/h"}); err != nil || len(p.Argv) != 3 {
		t.Errorf("none: %+v %v", p, err)
	}
	if p, err := Resolve("", []string{filepath.Join("/x", "node"), "cli.js"}, Env{Cwd: "/w", Home: "/h"}); err != nil || p.Harness != None {
		t.Errorf("by base name: %+v %v", p, err)
	}
}
