package harness

import (
	"path/filepath"
	"slices"
	"testing"
	"time"
)

const (
	v074 = "0.74.2"
	v16  = "1.6.0"
)

// TestPi_ArgvByRelease: each release's argv rules, and the unknown release
// reading argv by the newest rules unless the tested ones disagree.
func TestPi_ArgvByRelease(t *testing.T) {
	f := newFixture(t)
	old, recent := filepath.Join(f.piDir, piOld), filepath.Join(f.piDir, piNew)
	oldID := "01900000-0000-7000-8000-000000000001"
	tests := []struct {
		name, version string
		argv          []string
		files         []string
		argvOut       []string // nil: argv unchanged
		unknown       bool
	}{
		// 1.x: after "--" every argument is a message; nothing there is read or rewritten.
		{name: "terminator", version: v16, argv: []string{"pi", "-p", "--", "--session", oldID}},
		{name: "terminator -c", version: v16, argv: []string{"pi", "--", "-c"}},
		{name: "terminator after a flag", version: v16, argv: []string{"pi", "-c", "--", "--session", "x"}, files: []string{recent},
			argvOut: []string{"pi", "--session", recent, "--", "--session", "x"}},
		{name: "0.74 has no terminator", version: v074, argv: []string{"pi", "-p", "--", "--session", oldID}, files: []string{old},
			argvOut: []string{"pi", "-p", "--", "--session", old}},
		{name: "unknown release, readings differ", argv: []string{"pi", "-p", "--", "--session", oldID}, unknown: true},
		{name: "unknown release, readings agree", argv: []string{"pi", "--session", oldID, "-p", "x"}, files: []string{old},
			argvOut: []string{"pi", "--session", old, "-p", "x"}},
		// 1.x value flags: their value is never a flag, a message or a file.
		{name: "-n takes any value", version: v16, argv: []string{"pi", "-n", "-c", "-p", "x"}},
		{name: "--name takes any value", version: v16, argv: []string{"pi", "--name", "--session", "a/s.jsonl"}},
		{name: "-xt", version: v16, argv: []string{"pi", "-xt", "--session", "a/s.jsonl"}},
		{name: "--exclude-tools", version: v16, argv: []string{"pi", "--exclude-tools", "-c"}},
		{name: "--use-theme takes a word", version: v16, argv: []string{"pi", "--use-theme", "a/s.jsonl", "--session", "b/s.jsonl"},
			files: []string{"/w/proj/b/s.jsonl"}},
		{name: "--use-theme leaves a flag", version: v16, argv: []string{"pi", "--use-theme", "-c"}, files: []string{recent},
			argvOut: []string{"pi", "--use-theme", "--session", recent}},
		{name: "--tui-mode takes a word", version: v16, argv: []string{"pi", "--tui-mode", "regular", "-c"}, files: []string{recent},
			argvOut: []string{"pi", "--tui-mode", "regular", "--session", recent}},
		{name: "1.x --mode leaves a flag", version: v16, argv: []string{"pi", "--mode", "-c"}, files: []string{recent},
			argvOut: []string{"pi", "--mode", "--session", recent}},
		{name: "0.74 --mode takes any value", version: v074, argv: []string{"pi", "--mode", "-c"}},
		{name: "0.74 -n is an unknown option", version: v074, argv: []string{"pi", "-n", "-c"}, files: []string{recent},
			argvOut: []string{"pi", "-n", "--session", recent}},
		{name: "0.74 --name is an extension flag", version: v074, argv: []string{"pi", "--name", "-c"}, files: []string{recent},
			argvOut: []string{"pi", "--name", "--session", recent}},
		{name: "--session-id", version: v16, argv: []string{"pi", "--session-id", oldID}, files: []string{old}},
		{name: "0.74 has no --session-id", version: v074, argv: []string{"pi", "--session-id", oldID}},
		{name: "auth is a command", version: v16, argv: []string{"pi", "auth", "-c"}},
		{name: "0.74 auth is a message", version: v074, argv: []string{"pi", "auth", "-c"}, files: []string{recent},
			argvOut: []string{"pi", "auth", "--session", recent}},
		{name: "1.x expands ~", version: v16, argv: []string{"pi", "--session", "~/s.jsonl"}, files: []string{filepath.Join(f.home, "s.jsonl")}},
		{name: "0.74 takes ~ as a folder", version: v074, argv: []string{"pi", "--session", "~/s.jsonl"}, files: []string{"/w/proj/~/s.jsonl"}},
		{name: "1.x file URL", version: v16, argv: []string{"pi", "--session", "file:///abs/s.jsonl"}, files: []string{"/abs/s.jsonl"}},
		{name: "--export without a value is an extension flag", version: v16, argv: []string{"pi", "--export"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := f.env
			env.Version = tt.version
			p, err := Resolve("pi", tt.argv, env)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.argvOut
			if want == nil {
				want = tt.argv
			}
			if !slices.Equal(p.Files, tt.files) {
				t.Errorf("files %v, want %v", p.Files, tt.files)
			}
			if !slices.Equal(p.Argv, want) {
				t.Errorf("argv %q, want %q", p.Argv, want)
			}
			if (p.Unknown != "") != tt.unknown {
				t.Errorf("unknown %q, want %v", p.Unknown, tt.unknown)
			}
		})
	}
}

// TestPi1_SessionDirFiltersByCwd: in a custom session dir pi 1.x sees only
// the sessions whose header cwd is the current folder; another project's
// session found there by id is forked (a new file), never opened.
func TestPi1_SessionDirFiltersByCwd(t *testing.T) {
	f := newFixture(t)
	sd := t.TempDir()
	now := time.Now()
	mine := piFile(t, sd, "1_mine.jsonl", now.Add(-time.Hour), `{"type":"session","id":"aaaa-1111","timestamp":"2026-11-01T00:00:00Z","cwd":"/w/proj"}`)
	theirs := piFile(t, sd, "2_theirs.jsonl", now, `{"type":"session","id":"bbbb-2222","timestamp":"2026-11-02T00:00:00Z","cwd":"/w/other"}`)
	run := func(version string, vars map[string]string, argv ...string) Plan {
		t.Helper()
		env := f.env
		env.Version = version
		env.Getenv = func(k string) string { return vars[k] }
		p, err := Resolve("pi", append([]string{"pi"}, argv...), env)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	flag := []string{"--session-dir", sd}
	for _, tc := range []struct {
		name, version string
		vars          map[string]string
		argv          []string
		files         []string
		unknown       bool
	}{
		{name: "prefix of another project's session forks", version: v16, argv: append(flag, "--session", "bbbb")},
		{name: "exact id of another project's session forks", version: v16, argv: append(flag, "--session", "bbbb-2222")},
		{name: "own session opens", version: v16, argv: append(flag, "--session", "aaaa"), files: []string{mine}},
		{name: "continue skips another project's newer session", version: v16, argv: append(flag, "-c"), files: []string{mine}},
		{name: "session-id of another project's session is new", version: v16, argv: append(flag, "--session-id", "bbbb-2222"), unknown: true},
		{name: "env session dir filters too", version: v16, vars: map[string]string{"PI_CODING_AGENT_SESSION_DIR": sd}, argv: []string{"-c"}, files: []string{mine}},
		{name: "0.74 opens another project's session", version: v074, argv: append(flag, "--session", "bbbb"), files: []string{theirs}},
		{name: "0.74 continues the newest", version: v074, argv: append(flag, "-c"), files: []string{theirs}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := run(tc.version, tc.vars, tc.argv...)
			if !slices.Equal(p.Files, tc.files) {
				t.Errorf("files %v, want %v", p.Files, tc.files)
			}
			if (p.Unknown != "") != tc.unknown {
				t.Errorf("unknown %q, want %v", p.Unknown, tc.unknown)
			}
			if len(p.Watch) != 1 || p.Watch[0].Dir != sd {
				t.Errorf("watch %v, want %s", p.Watch, sd)
			}
		})
	}
}

// TestPi1_DefaultDirIsNotFiltered: a --session-dir that is the cwd's
// default folder lists every session in it, as pi 1.x does.
func TestPi1_DefaultDirIsNotFiltered(t *testing.T) {
	f := newFixture(t)
	other := piFile(t, f.piDir, "3_other.jsonl", time.Now().Add(time.Hour), `{"type":"session","id":"cccc-3333","cwd":"/w/elsewhere"}`)
	env := f.env
	env.Version = v16
	p, _ := Resolve("pi", []string{"pi", "--session-dir", f.piDir, "-c"}, env)
	if !slices.Equal(p.Files, []string{other}) {
		t.Errorf("files %v, want %v", p.Files, []string{other})
	}
}

// TestPi1_ExactIDBeforePrefix: pi 1.x opens the session of exactly that id
// even when another whose id it prefixes has newer activity; 0.74 takes
// the newest prefix match.
func TestPi1_ExactIDBeforePrefix(t *testing.T) {
	f := newFixture(t)
	dir := filepath.Join(f.home, ".pi", "agent", "sessions", "--w-proj--")
	now := time.Now()
	exact := piFile(t, dir, "4_exact.jsonl", now, line(hdr, "dddd", "2026-01-01T00:00:00Z"))
	longer := piFile(t, dir, "5_longer.jsonl", now, line(hdr, "dddd-4", "2026-02-01T00:00:00Z"))
	for version, want := range map[string]string{v16: exact, v074: longer} {
		env := f.env
		env.Version = version
		p, _ := Resolve("pi", []string{"pi", "--session", "dddd"}, env)
		if !slices.Equal(p.Files, []string{want}) {
			t.Errorf("pi %s: files %v, want %s", version, p.Files, want)
		}
	}
}

// TestPi1_GlobalSearchOfCustomDirIsThatDir: with a custom session dir, pi
// 1.x's global search is that folder only; 0.74 searches every project
// under the agent dir.
func TestPi1_GlobalSearchOfCustomDirIsThatDir(t *testing.T) {
	f := newFixture(t) // "abcdef" lives in <agentDir>/sessions/--other--
	sd := t.TempDir()
	for version, fork := range map[string]bool{v16: false, v074: true} {
		env := f.env
		env.Version = version
		p, _ := Resolve("pi", []string{"pi", "--session-dir", sd, "--session", "abc"}, env)
		// A fork watches for the new file; "no session matches" watches nothing.
		if got := len(p.Watch) > 0; got != fork || len(p.Files) > 0 {
			t.Errorf("pi %s: files %v watch %v, want fork %v", version, p.Files, p.Watch, fork)
		}
	}
}

// TestPi_HeaderRulesByRelease: -c skips a file without a session header;
// 0.74 needs the header within the first line of 512 bytes, 1.x skips
// blank and malformed lines before it.
func TestPi_HeaderRulesByRelease(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	plain := piFile(t, dir, "1.jsonl", now.Add(-time.Hour), `{"type":"session","id":"e1","cwd":"/w/proj"}`)
	late := piFile(t, dir, "2.jsonl", now, "", "not json", `{"type":"session","id":"e2","cwd":"/w/proj"}`)
	env := Env{Getenv: func(string) string { return "" }, Cwd: "/w/proj", Home: t.TempDir()}
	for version, want := range map[string]string{v16: late, v074: plain} {
		env.Version = version
		p, _ := Resolve("pi", []string{"pi", "--session-dir", dir, "-c"}, env)
		if !slices.Equal(p.Files, []string{want}) {
			t.Errorf("pi %s: files %v, want %s", version, p.Files, want)
		}
	}
}

// TestPi1_TiesInReverseNameOrder: sessions of equal last activity rank in
// reverse name order in pi 1.x's list (it sorts the names descending before
// its stable sort), in name order in 0.74's.
func TestPi1_TiesInReverseNameOrder(t *testing.T) {
	f := newFixture(t)
	dir := filepath.Join(f.home, ".pi", "agent", "sessions", "--w-proj--")
	now := time.Now()
	first := piFile(t, dir, "6_a.jsonl", now, line(hdr, "tie-1", "2026-01-01T00:00:00Z"))
	second := piFile(t, dir, "7_b.jsonl", now, line(hdr, "tie-2", "2026-01-01T00:00:00Z"))
	for version, want := range map[string]string{v16: second, v074: first} {
		env := f.env
		env.Version = version
		p, _ := Resolve("pi", []string{"pi", "--session", "tie-"}, env)
		if !slices.Equal(p.Files, []string{want}) {
			t.Errorf("pi %s: files %v, want %s", version, p.Files, want)
		}
	}
}

// TestPi1_PickerName_LeftToTheCompanion: pi 1.x writes -r --name's name into
// the picked file before extensions load, so padrun takes the name out of
// argv and hands it to the companion; never without a companion, never for
// 0.74 (no --name) or a name pi itself would reject.
func TestPi1_PickerName_LeftToTheCompanion(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name, version string
		noCompanion   bool
		argv, argvOut []string // argvOut nil: unchanged
		env           []string
	}{
		{name: "-r --name", version: v16, argv: []string{"pi", "-r", "--name", "x"}, argvOut: []string{"pi", "-r"}, env: []string{"PADRUN_PI_NAME=x"}},
		{name: "every -n, the last wins", version: v16, argv: []string{"pi", "-n", "a", "--resume", "-n", " b ", "hi"},
			argvOut: []string{"pi", "--resume", "hi"}, env: []string{"PADRUN_PI_NAME=b"}},
		{name: "no companion", version: v16, noCompanion: true, argv: []string{"pi", "-r", "--name", "x"}},
		{name: "an empty name is pi's error", version: v16, argv: []string{"pi", "-r", "--name", " "}},
		{name: "no picker", version: v16, argv: []string{"pi", "--name", "x", "-p", "hi"}},
		{name: "0.74", version: v074, argv: []string{"pi", "-r", "--name", "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := f.env
			env.Version, env.NoCompanion = tt.version, tt.noCompanion
			p, err := Resolve("pi", tt.argv, env)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.argvOut
			if want == nil {
				want = tt.argv
			}
			if !slices.Equal(p.Argv, want) || !slices.Equal(p.CompanionEnv, tt.env) {
				t.Errorf("argv %q, companion env %q; want %q, %q", p.Argv, p.CompanionEnv, want, tt.env)
			}
		})
	}
}
