package harness

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func dbEnv(t *testing.T, vars map[string]string) Env {
	return Env{Getenv: func(k string) string { return vars[k] }, Cwd: "/w/proj", Home: "/home/u", Version: "1.18.33"}
}

// TestOpencode_DatabasePath: the database is $OPENCODE_DB (absolute, or
// under the data folder), else opencode.db in $XDG_DATA_HOME/opencode,
// else in ~/.local/share/opencode; kilo's under its own names.
func TestOpencode_DatabasePath(t *testing.T) {
	for _, c := range []struct {
		h    dbHarness
		vars map[string]string
		want string
	}{
		{opencodeNames, nil, "/home/u/.local/share/opencode/opencode.db"},
		{opencodeNames, map[string]string{"XDG_DATA_HOME": "/x"}, "/x/opencode/opencode.db"},
		{opencodeNames, map[string]string{"OPENCODE_DB": "/d/o.db"}, "/d/o.db"},
		{opencodeNames, map[string]string{"OPENCODE_DB": "mine.db", "XDG_DATA_HOME": "/x"}, "/x/opencode/mine.db"},
		{opencodeNames, map[string]string{"OPENCODE_DB": ":memory:"}, ""},
		{opencodeNames, map[string]string{"KILO_DB": "/d/k.db"}, "/home/u/.local/share/opencode/opencode.db"},
		{kiloNames, nil, "/home/u/.local/share/kilo/kilo.db"},
		{kiloNames, map[string]string{"KILO_DB": "/d/k.db"}, "/d/k.db"},
		{kiloNames, map[string]string{"OPENCODE_DB": "/d/o.db", "XDG_DATA_HOME": "/x"}, "/x/kilo/kilo.db"},
	} {
		if got := c.h.db(dbEnv(t, c.vars)); got != c.want {
			t.Errorf("%s %v: database %q, want %q", c.h.name, c.vars, got, c.want)
		}
	}
}

// TestSessionGuard_Naming: a session of a database is held by
// <dbdir>/.<db>.padrun/<id>; only such a name with a valid id is a guard,
// and no id can leave the folder.
func TestSessionGuard_Naming(t *testing.T) {
	g := SessionGuard("/d/opencode.db", "ses_1")
	if g != "/d/.opencode.db.padrun/ses_1" || GuardFolder("/d/opencode.db") != filepath.Dir(g) {
		t.Fatalf("guard %q", g)
	}
	for path, want := range map[string]bool{
		g: true, "/d/.kilo.db.padrun/ses_ABC-1_x": true,
		"/d/opencode.db.padrun/ses_1": false, "/d/.padrun/ses_1": false, "/d/.opencode.db.padrun/.x": false,
		"/d/.opencode.db.padrun/a b": false, "/w/s.jsonl": false,
	} {
		if IsSessionGuard(path) != want {
			t.Errorf("IsSessionGuard(%q) = %v, want %v", path, !want, want)
		}
	}
	for _, id := range []string{"", ".", "..", "../x", "a/b", `a\b`, ".hidden", "a\nb", "_a", "-a", "a.b", "a b", "é", strings.Repeat("a", 129)} {
		if ValidSessionID(id) {
			t.Errorf("ValidSessionID(%q): an id that is no name of one file in the folder", id)
		}
	}
	for _, id := range []string{"a", "9", "ses_dcdbd9b43ffe9RpeY2UBabgfd0", "A-b_c", "a" + strings.Repeat("_", 127)} {
		if !ValidSessionID(id) {
			t.Errorf("ValidSessionID(%q) = false: a session id", id)
		}
	}
}

// TestSessionArg_NamesTheGuard: status and unlock take opencode:ID,
// kilo:ID and DB:ID; anything else is a file.
func TestSessionArg_NamesTheGuard(t *testing.T) {
	env := dbEnv(t, map[string]string{"XDG_DATA_HOME": "/x"})
	for arg, want := range map[string]string{
		"opencode:ses_1":         "/x/opencode/.opencode.db.padrun/ses_1",
		"kilo:ses_2":             "/x/kilo/.kilo.db.padrun/ses_2",
		"/d/opencode.db:ses_3":   "/d/.opencode.db.padrun/ses_3",
		"rel/k.db:ses_4":         "/w/proj/rel/.k.db.padrun/ses_4",
		"/w/s.jsonl":             "",
		"opencode:../x":          "",
		"pi:ses_1":               "",
		"/d/notes.txt:ses_1":     "",
		"/d/.opencode.db.padrun": "",
	} {
		got, ok := SessionArg(arg, env)
		if ok != (want != "") || got != want {
			t.Errorf("SessionArg(%q) = %q, %v; want %q", arg, got, ok, want)
		}
	}
}

// TestOpencode_Argv: which runs name their session before the start (-s
// ID, held then), which leave it to the companion (-c, a new session,
// --fork, serve and acp), which are unknown, and the modes.
func TestOpencode_Argv(t *testing.T) {
	db := "/home/u/.local/share/opencode/opencode.db"
	held := func(id string) []string { return []string{SessionGuard(db, id)} }
	for _, c := range []struct {
		argv      []string
		files     []string
		mode      string
		unknown   bool
		companion bool
	}{
		{[]string{"opencode", "run", "hi"}, nil, ModePrint, false, true},
		{[]string{"opencode", "run", "-c", "hi"}, nil, ModePrint, false, true},
		{[]string{"opencode", "run", "-s", "ses_1", "hi"}, held("ses_1"), ModePrint, false, true},
		{[]string{"opencode", "run", "--session=ses_1", "--format", "json", "hi"}, held("ses_1"), ModeJSON, false, true},
		{[]string{"opencode", "run", "-s", "ses_1", "--fork", "hi"}, nil, ModePrint, false, true},
		{[]string{"opencode", "run", "-m", "-s", "x"}, held("x"), ModePrint, false, true}, // an option is never a value: -s is read
		{[]string{"opencode", "run", "--title", "-s", "ses_1", "hi"}, held("ses_1"), ModePrint, false, true},
		{[]string{"opencode", "run", "-f", "a", "b", "-s", "ses_1"}, held("ses_1"), ModePrint, false, true},
		{[]string{"opencode", "run", "--", "-s", "ses_1"}, nil, ModePrint, false, true},
		{[]string{"opencode", "run", "-s", "../x", "hi"}, nil, ModePrint, true, true},
		{[]string{"opencode", "run", "--attach", "http://h:1", "-c", "hi"}, nil, ModePrint, true, false},
		{[]string{"opencode"}, nil, ModeInteractive, false, true},
		{[]string{"opencode", "/w/other"}, nil, ModeInteractive, false, true},
		{[]string{"opencode", "-s", "ses_9"}, held("ses_9"), ModeInteractive, false, true},
		{[]string{"opencode", "--log-level", "DEBUG", "-c"}, nil, ModeInteractive, false, true},
		{[]string{"opencode", "serve", "--port", "4096"}, nil, ModeRPC, false, true},
		{[]string{"opencode", "web"}, nil, ModeRPC, false, true},
		{[]string{"opencode", "acp"}, nil, ModeRPC, false, true},
		{[]string{"opencode", "attach", "http://h:1", "-s", "ses_1"}, nil, ModeInteractive, true, false},
		{[]string{"opencode", "session", "delete", "ses_5"}, held("ses_5"), ModePrint, false, false},
		{[]string{"opencode", "session", "list"}, nil, ModePrint, false, false},
		{[]string{"opencode", "import", "f.json"}, nil, ModePrint, true, false},
		{[]string{"opencode", "models"}, nil, "", false, false},
		{[]string{"opencode", "--help"}, nil, "", false, false},
		{[]string{"opencode", "run", "--version"}, nil, "", false, false},
	} {
		p := opencode(c.argv, dbEnv(t, nil))
		p.Harness = "opencode"
		if !slices.Equal(p.Files, c.files) || p.Mode != c.mode || (p.Unknown != "") != c.unknown {
			t.Errorf("%q: files %v mode %q unknown %q; want %v %q unknown=%v", c.argv, p.Files, p.Mode, p.Unknown, c.files, c.mode, c.unknown)
		}
		if got := Companion(p) != ""; got != c.companion {
			t.Errorf("%q: companion %v, want %v", c.argv, got, c.companion)
		}
		if !slices.Equal(p.Argv, c.argv) {
			t.Errorf("%q: argv changed to %q: padrun pins nothing of opencode", c.argv, p.Argv)
		}
	}
}

// TestOpencode_NoCompanion_ContinueUnknown: without the companion (its
// flag, --pure, $OPENCODE_PURE) only -s ID is known: -c and a new session
// are unknown (a warning; --strict refuses), a server's sessions too.
func TestOpencode_NoCompanion_ContinueUnknown(t *testing.T) {
	for _, c := range []struct {
		argv    []string
		vars    map[string]string
		noComp  bool
		unknown bool
	}{
		{[]string{"opencode", "run", "-c", "hi"}, nil, true, true},
		{[]string{"opencode", "run", "hi"}, nil, true, true},
		{[]string{"opencode", "run", "-s", "ses_1", "hi"}, nil, true, false},
		{[]string{"opencode", "serve"}, nil, true, true},
		{[]string{"opencode", "--pure", "run", "-c", "hi"}, nil, false, true},
		{[]string{"opencode", "run", "-c", "hi"}, map[string]string{"OPENCODE_PURE": "1"}, false, true},
		{[]string{"opencode", "run", "-c", "hi"}, map[string]string{"KILO_PURE": "1"}, false, false},
		{[]string{"opencode", "run", "-c", "hi"}, nil, false, false},
	} {
		env := dbEnv(t, c.vars)
		env.NoCompanion = c.noComp
		if p := opencode(c.argv, env); (p.Unknown != "") != c.unknown {
			t.Errorf("%q %v no-companion=%v: unknown %q, want unknown=%v", c.argv, c.vars, c.noComp, p.Unknown, c.unknown)
		}
	}
}

// TestOpencode_CompanionEnv: the plugin is added to the user's inline
// config, never over a config padrun cannot read; run asks padrun to stop
// it on a refused claim; the plugin learns the guards' folder.
func TestOpencode_CompanionEnv(t *testing.T) {
	c := must(Lookup("opencode")).Companion
	load := func(user string) ([]string, bool) {
		return c.Env(Load{Script: "/run/padrun/opencode-companion-x.js", Getenv: func(k string) string {
			if k == "OPENCODE_CONFIG_CONTENT" {
				return user
			}
			return ""
		}})
	}
	plugins := func(env []string) []any {
		k, v, _ := strings.Cut(env[0], "=")
		var cfg map[string]any
		if k != "OPENCODE_CONFIG_CONTENT" || json.Unmarshal([]byte(v), &cfg) != nil {
			t.Fatalf("env %q", env)
		}
		ps, _ := cfg["plugin"].([]any)
		return ps
	}
	env, ok := load("")
	if !ok || !slices.Equal(plugins(env), []any{"file:///run/padrun/opencode-companion-x.js"}) {
		t.Errorf("no inline config: %q", env)
	}
	env, ok = load(`{"plugin":["mine"],"model":"x/y"}`)
	if !ok || !slices.Equal(plugins(env), []any{"mine", "file:///run/padrun/opencode-companion-x.js"}) || !strings.Contains(env[0], `"model":"x/y"`) {
		t.Errorf("the user's inline config: %q", env)
	}
	for _, bad := range []string{`{"plugin":"x"}`, `// c` + "\n{}", `[1]`, `null`} {
		if env, ok := load(bad); ok {
			t.Errorf("inline config %q: padrun wrote over it: %q", bad, env)
		}
	}
	p := opencode([]string{"opencode", "run", "-c", "x"}, dbEnv(t, nil))
	if !slices.Contains(p.CompanionEnv, "PADRUN_STOP=1") || !slices.Contains(p.CompanionEnv, "PADRUN_SESSIONS=/home/u/.local/share/opencode/.opencode.db.padrun") {
		t.Errorf("run's companion env %q", p.CompanionEnv)
	}
	if p := opencode([]string{"opencode", "serve"}, dbEnv(t, nil)); slices.Contains(p.CompanionEnv, "PADRUN_STOP=1") {
		t.Errorf("serve is stopped on a refused claim: %q", p.CompanionEnv)
	}
}

// TestKilo_SameRulesOwnNames: kilo reads opencode's argv under its names.
func TestKilo_SameRulesOwnNames(t *testing.T) {
	p := kilo([]string{"kilo", "run", "-s", "ses_1", "hi"}, dbEnv(t, map[string]string{"KILO_DB": "/k/kilo.db"}))
	if !slices.Equal(p.Files, []string{"/k/.kilo.db.padrun/ses_1"}) || p.SessionID != "ses_1" {
		t.Errorf("kilo -s: %v %q", p.Files, p.SessionID)
	}
	if env, ok := must(Lookup("kilo")).Companion.Env(Load{Script: "/c.js"}); !ok || !strings.HasPrefix(env[0], "KILO_CONFIG_CONTENT=") {
		t.Errorf("kilo's companion env %q", env)
	}
}

// TestOpencode_NoCompanionWhereItCannotClaim: an in-memory database (no
// other process opens it) and --pure (no plugin loads) load no companion.
func TestOpencode_NoCompanionWhereItCannotClaim(t *testing.T) {
	for _, c := range []struct {
		argv []string
		vars map[string]string
	}{
		{[]string{"opencode", "run", "-c", "x"}, map[string]string{"OPENCODE_DB": ":memory:"}},
		{[]string{"opencode", "--pure", "run", "x"}, nil},
		{[]string{"opencode", "serve"}, map[string]string{"OPENCODE_PURE": "true"}},
	} {
		p := opencode(c.argv, dbEnv(t, c.vars))
		p.Harness = "opencode"
		if Companion(p) != "" {
			t.Errorf("%q %v: the companion loads", c.argv, c.vars)
		}
	}
}

// TestKilo_ContinueClaimedAtLoad: only kilo's run -c (no -s, which wins,
// no --fork, which writes a new session) has its pick claimed as the
// companion loads; opencode removes no reply before its hook.
func TestKilo_ContinueClaimedAtLoad(t *testing.T) {
	for _, c := range []struct {
		argv []string
		want bool
	}{
		{[]string{"kilo", "run", "-c", "hi"}, true},
		{[]string{"kilo", "run", "--continue", "hi"}, true},
		{[]string{"kilo", "run", "-c", "--fork", "hi"}, false},
		{[]string{"kilo", "run", "-c", "-s", "ses_1", "hi"}, false},
		{[]string{"kilo", "-c"}, false},
		{[]string{"opencode", "run", "-c", "hi"}, false},
	} {
		read := kilo
		if c.argv[0] == "opencode" {
			read = opencode
		}
		p := read(c.argv, dbEnv(t, nil))
		if got := slices.Contains(p.CompanionEnv, "PADRUN_CONTINUE=1"); got != c.want {
			t.Errorf("%q: PADRUN_CONTINUE=1 %v, want %v (%q)", c.argv, got, c.want, p.CompanionEnv)
		}
	}
}
