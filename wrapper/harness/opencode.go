package harness

import (
	"cmp"
	"encoding/json"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
)

// A harness that keeps its sessions as rows of one SQLite database
// (opencode, and its fork kilo) has no file per session. padrun guards
// such a session by a name of its own beside the database, never inside
// it: <dbdir>/.<db name>.padrun/<session id>, whose marker and lock are the
// usual <id>.live.json and <id>.live.lock (docs/spec.md §4.7). The name is never
// created as a file; its folder is padrun's, 0700.

// dbHarness is what differs between opencode and kilo: their names.
type dbHarness struct {
	name    string // the command, and the data folder's name
	dbVar   string // OPENCODE_DB: the database, absolute or under the data folder
	dbName  string // opencode.db: the release channel's database ("latest")
	content string // OPENCODE_CONFIG_CONTENT: inline config, merged last
	pure    string // OPENCODE_PURE: no external plugins (the companion cannot load)
	// recovers: its prompt removes a session's unfinished reply before any
	// hook (kilo's recoverDanglingAssistant), so run -c's pick is claimed
	// as the companion loads.
	recovers bool
}

var (
	opencodeNames = dbHarness{name: "opencode", dbVar: "OPENCODE_DB", dbName: "opencode.db",
		content: "OPENCODE_CONFIG_CONTENT", pure: "OPENCODE_PURE"}
	kiloNames = dbHarness{name: "kilo", dbVar: "KILO_DB", dbName: "kilo.db",
		content: "KILO_CONFIG_CONTENT", pure: "KILO_PURE", recovers: true}
)

// guardSuffix ends the name of the folder padrun keeps beside a database.
const guardSuffix = ".padrun"

// maxSessionID bounds a session id in a guard's name.
const maxSessionID = 128

// ValidSessionID says whether id can name a session of a database: a
// letter or digit, then up to maxSessionID-1 letters, digits, '_' and '-'.
// opencode's ids are ses_ and 26 letters and digits (1.18.33
// Identifier.ascending); nothing that could leave the folder. (A loop, not
// a regexp: a bounded repeat compiles into one state per repeat, which
// would cost every start of padrun a millisecond.)
func ValidSessionID(id string) bool {
	if id == "" || len(id) > maxSessionID {
		return false
	}
	for i, c := range []byte(id) {
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if !alnum && (i == 0 || c != '_' && c != '-') {
			return false
		}
	}
	return true
}

// SessionGuard names the guard of session id of the database db.
func SessionGuard(db, id string) string {
	return filepath.Join(filepath.Dir(db), "."+filepath.Base(db)+guardSuffix, id)
}

// GuardFolder is the folder of db's session guards.
func GuardFolder(db string) string {
	return filepath.Join(filepath.Dir(db), "."+filepath.Base(db)+guardSuffix)
}

// IsSessionGuard says whether path names a session of a database: a valid
// id in a folder .<db>.padrun.
func IsSessionGuard(path string) bool {
	dir := filepath.Base(filepath.Dir(path))
	return strings.HasPrefix(dir, ".") && strings.HasSuffix(dir, guardSuffix) &&
		len(dir) > len("."+guardSuffix) && ValidSessionID(filepath.Base(path))
}

// SessionArg reads a status or unlock argument that names a session of a
// database: HARNESS:ID (the harness's own database, as env resolves it) or
// DB:ID (a database file, its name ending in .db). ok is false for any
// other argument, which names a file.
func SessionArg(arg string, env Env) (guard string, ok bool) {
	i := strings.LastIndex(arg, ":")
	if i < 0 {
		return "", false
	}
	where, id := arg[:i], arg[i+1:]
	if !ValidSessionID(id) {
		return "", false
	}
	if env.Getenv == nil {
		env.Getenv = func(string) string { return "" }
	}
	for _, h := range []dbHarness{opencodeNames, kiloNames} {
		if where == h.name {
			db := h.db(env)
			if db == "" {
				return "", false
			}
			return SessionGuard(db, id), true
		}
	}
	if strings.HasSuffix(where, ".db") {
		return SessionGuard(abs(where, env), id), true
	}
	return "", false
}

// startLocks is where the harness keeps its locks (1.17.19, 1.18.33, kilo
// 7.7.7 and 7.7.9 EffectFlock: $XDG_STATE_HOME/opencode/locks, else
// ~/.local/state/opencode/locks; one folder per lock, its meta.json naming
// the holder's pid). Its start installs @opencode-ai/plugin into each of its
// config folders under such a lock (Npm.install, "npm-install:DIR"), and no
// plugin loads before that install has ended (Plugin.state awaits
// Config.waitForDependencies): on a first start, or a slow network, the
// companion greets only then.
func (h dbHarness) startLocks(env Env) string {
	return filepath.Join(abs(cmp.Or(env.Getenv("XDG_STATE_HOME"), filepath.Join(env.Home, ".local", "state")), env), h.name, "locks")
}

// db is the database the harness opens, as its Database.path of 1.18.33
// (kilo 7.7.9 the same with its names): $OPENCODE_DB, absolute or under
// the data folder ($XDG_DATA_HOME/opencode, else ~/.local/share/opencode),
// else opencode.db there (the released channel, "latest"). ":memory:" is no
// file: "" (no other process can open that session).
func (h dbHarness) db(env Env) string {
	data := filepath.Join(abs(cmp.Or(env.Getenv("XDG_DATA_HOME"), filepath.Join(env.Home, ".local", "share")), env), h.name)
	v := env.Getenv(h.dbVar)
	switch {
	case v == ":memory:":
		return ""
	case v == "":
		return filepath.Join(data, h.dbName)
	case filepath.IsAbs(v):
		return filepath.Clean(v)
	}
	return filepath.Join(data, v)
}

// opencode's options that take a value (yargs options of type string,
// number or array in 1.18.33's run, $0, attach, serve and acp builders, the
// network options and the global ones); kilo 7.7.9 has the same. A value
// is the next word unless it looks like an option, as yargs reads them.
var (
	opencodeValue = words{
		"-m", "--model", "--agent", "--command", "--format", "--title",
		"--attach", "-p", "--password", "-u", "--username", "--dir",
		"--port", "--variant", "--hostname", "--mdns-domain", "--prompt",
		"--log-level", "--replay-limit", "-s", "--session", "--cwd",
	}
	opencodeList = words{"-f", "--file", "--cors"}
	// opencodeCommands are the commands that open no session of their own
	// (help, set-up, listings, exports). run, $0, serve, web, acp, attach,
	// session, import, github and pr are read below.
	opencodeCommands = words{
		"completion", "mcp", "auth", "providers", "agent", "upgrade",
		"uninstall", "models", "stats", "export", "debug", "db",
		"plugin", "plug", "console", "help", "generate", "account",
	}
)

type opencodeArgs struct {
	command          string // "" for the TUI ($0)
	sub              string // session's subcommand
	words            []string
	cont, fork, pure bool
	info             bool
	hasSession       bool
	session, format  string
	attach           string
}

// optionValue splits --name=value; a short option or a bare word is its
// own name.
func optionValue(arg string) (name, value string, hasValue bool) {
	if strings.HasPrefix(arg, "--") {
		return strings.Cut(arg, "=")
	}
	return arg, "", false
}

// yargsValue is the value of the option at argv[i], as yargs reads a
// string option: the next word, unless it looks like an option. It returns
// the index of the last word read.
func yargsValue(argv []string, i int) (string, int) {
	if i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "-") {
		return argv[i+1], i + 1
	}
	return "", i
}

func parseOpencode(argv []string) opencodeArgs {
	var a opencodeArgs
	for i := 1; i < len(argv) && argv[i] != "--"; i++ {
		arg := argv[i]
		name, value, hasValue := optionValue(arg)
		switch {
		case name == "-c" || name == "--continue":
			a.cont = true
		case name == "--fork":
			a.fork = true
		case name == "--pure":
			a.pure = true
		case name == "-h" || name == "--help" || name == "-v" || name == "--version":
			a.info = true
		case opencodeValue.has(name):
			if !hasValue {
				value, i = yargsValue(argv, i)
			}
			switch name {
			case "-s", "--session":
				a.session, a.hasSession = value, true
			case "--format":
				a.format = value
			case "--attach":
				a.attach = value
			}
		case opencodeList.has(name):
			for more := !hasValue; more; {
				value, i = yargsValue(argv, i)
				more = value != ""
			}
		case strings.HasPrefix(arg, "-"):
		case len(a.words) == 0 && a.command == "":
			a.command = arg
			if !opencodeKnown(arg) {
				a.command = "" // the TUI's [project]
				a.words = append(a.words, arg)
			}
		default:
			a.words = append(a.words, arg)
			if a.command == "session" && a.sub == "" {
				a.sub = arg
			}
		}
	}
	return a
}

func opencodeKnown(cmd string) bool {
	switch cmd {
	case "run", "serve", "web", "acp", "attach", "session", "import", "github", "pr":
		return true
	}
	return opencodeCommands.has(cmd)
}

// mode is the run's mode, as padrun records it; "" when it opens no
// session.
func (a opencodeArgs) mode() string {
	switch {
	case a.info || opencodeCommands.has(a.command):
		return ""
	case a.command == "run" && a.format == "json":
		return ModeJSON
	case a.command == "run", a.command == "session", a.command == "import":
		return ModePrint
	case a.command == "serve", a.command == "web", a.command == "acp":
		return ModeRPC
	}
	return ModeInteractive
}

// opencode and kilo read the command line of a harness whose sessions are
// rows of one database (docs/spec.md §4.7; opencode 1.18.33, kilo 7.7.9).
func opencode(argv []string, env Env) Plan { return opencodeNames.read(argv, env) }

func kilo(argv []string, env Env) Plan { return kiloNames.read(argv, env) }

func (h dbHarness) read(argv []string, env Env) Plan {
	a := parseOpencode(argv)
	p := Plan{Argv: argv, Mode: a.mode()}
	db := h.db(env)
	if p.Mode == "" || db == "" {
		return p
	}
	guard := func(id string) bool {
		if !ValidSessionID(id) {
			p.Unknown = h.name + " is given " + quoteID(id) + ", which is no session id padrun can name"
			return false
		}
		p.Files, p.SessionID = []string{SessionGuard(db, id)}, id
		return true
	}
	switch a.command {
	case "attach":
		p.Unknown = "the server at " + a.firstWord() + " writes the session: run that server under padrun"
		return p
	case "run":
		if a.attach != "" {
			p.Unknown = "--attach: the server at " + a.attach + " writes the session: run that server under padrun"
			return p
		}
	case "session":
		if a.sub == "delete" && len(a.words) > 1 {
			guard(a.words[1])
		}
		return p
	case "import", "github", "pr":
		p.Unknown = h.name + " " + a.command + " writes a session padrun cannot name before it runs"
		return p
	}
	// The companion claims every session a turn is sent to, before the
	// message is stored; without it, only a session named by -s is known.
	pure := a.pure || truthy(env.Getenv(h.pure)) // no external plugin loads
	noCompanion := env.NoCompanion || pure
	if noCompanion && p.Mode != ModeRPC {
		switch {
		case a.hasSession && !a.fork:
		case a.cont:
			p.Unknown = "-c picks the project's latest session inside " + h.name + ", and its companion is off"
		default:
			p.Unknown = "a new session's id is made inside " + h.name + ", and its companion is off"
		}
	}
	if noCompanion && p.Mode == ModeRPC {
		p.Unknown = h.name + " " + a.command + " opens the sessions it is asked for, and its companion is off"
	}
	if a.hasSession && !a.fork {
		guard(a.session) // named by its id: held before the start
	}
	if pure {
		return p
	}
	p.CompanionEnv = []string{"PADRUN_SESSIONS=" + GuardFolder(db)}
	p.StartLocks = h.startLocks(env)
	if a.command == "run" {
		// run cannot go on without its session: a refused claim ends it.
		p.CompanionEnv = append(p.CompanionEnv, "PADRUN_STOP=1")
		if h.recovers && a.cont && !a.fork && !a.hasSession {
			p.CompanionEnv = append(p.CompanionEnv, "PADRUN_CONTINUE=1") // -s wins over -c in run
		}
	}
	return p
}

func (a opencodeArgs) firstWord() string {
	if len(a.words) > 0 {
		return a.words[0]
	}
	return "URL"
}

func quoteID(id string) string {
	b, _ := json.Marshal(id)
	return string(b)
}

func truthy(v string) bool {
	v = strings.ToLower(v)
	return v == "1" || v == "true"
}

// companionWanted: the companion loads into every run that may write a
// session of a database, which read gives the guards' folder: not help,
// listings, an attach to a server (which writes its sessions in its own
// process), an in-memory database, or a run without external plugins.
func (h dbHarness) companionWanted(p Plan) bool {
	return len(p.Argv) > 0 && p.Mode != "" && slices.ContainsFunc(p.CompanionEnv, func(kv string) bool {
		return strings.HasPrefix(kv, "PADRUN_SESSIONS=")
	})
}

// companionEnv loads the companion at script into the harness: a plugin
// named in its inline config ($OPENCODE_CONFIG_CONTENT, merged over the
// user's other config, its plugin lists joined), which is merged with the
// inline config the user gave. ok is false when that config is not a JSON
// object padrun can add to (opencode reads JSONC there: comments and all).
func (h dbHarness) companionEnv(l Load) (env []string, ok bool) {
	cfg := map[string]any{}
	if v := l.Getenv(h.content); strings.TrimSpace(v) != "" {
		if json.Unmarshal([]byte(v), &cfg) != nil || cfg == nil {
			return nil, false
		}
	}
	spec := (&url.URL{Scheme: "file", Path: l.Script}).String()
	var plugins []any
	switch old := cfg["plugin"].(type) {
	case nil:
	case []any:
		plugins = old
	default:
		return nil, false
	}
	cfg["plugin"] = append(plugins, spec)
	b, err := json.Marshal(cfg)
	if err != nil {
		return nil, false
	}
	return []string{h.content + "=" + string(b)}, true
}
