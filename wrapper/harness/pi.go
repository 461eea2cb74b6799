package harness

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// piFlag is how one of pi's flags takes its value, as its parseArgs does.
type piFlag int

const (
	piBool     piFlag = iota // no value
	piValue                  // the next argument, whatever it is; without one, the flag reads as an unknown one
	piRequired               // the next argument, whatever it is; without one, pi fails
	piWord                   // the next argument unless it starts with "-"
	piMessage                // -p: a following message, unless it starts with "@" or "-" ("---x" is one)
	piPattern                // --list-models: the next argument unless it starts with "-" or "@"
)

// piRules are the command-line rules of one line of pi releases, mirrored
// from its parseArgs (dist/cli/args.js) and its session lookup (main.js,
// core/session-manager.js). TestPiFlags_MatchPinnedPi reads the pinned
// releases' args.js and fails when they know a flag these do not.
type piRules struct {
	release  string // the release they were read from
	flags    map[string]piFlag
	commands words // a first word that runs a command, not a session
	// 1.x: "--" ends the flags (every later argument is a message), a
	// leading ~ and file:// URLs are expanded, --session-id exists, and a
	// custom session dir is filtered by the header's cwd (piFind1).
	newer bool
}

func piTable(kinds map[piFlag][]string) map[string]piFlag {
	m := map[string]piFlag{}
	for k, names := range kinds {
		for _, n := range names {
			m[n] = k
		}
	}
	return m
}

var piBools = []string{
	"--help", "-h", "--version", "-v", "--continue", "-c", "--resume", "-r", "--no-session", "--no-tools", "-nt",
	"--no-builtin-tools", "-nbt", "--no-extensions", "-ne", "--no-skills", "-ns", "--no-prompt-templates", "-np",
	"--no-themes", "--no-context-files", "-nc", "--verbose", "--offline",
}

var piValues = []string{
	"--provider", "--model", "--api-key", "--system-prompt", "--append-system-prompt", "--session", "--fork",
	"--session-dir", "--models", "--tools", "-t", "--thinking", "--export", "--extension", "-e", "--skill",
	"--prompt-template", "--theme",
}

var piCommands074 = words{"install", "remove", "uninstall", "update", "list", "config"}

// pi074 are pi 0.74's rules: no "--" terminator ("--" is an unknown flag
// that takes a following plain word), --mode takes any next argument.
// Like pi1, built at its first use: a run that wraps no pi builds neither.
var pi074 = sync.OnceValue(func() piRules {
	return piRules{
		release: "0.74.2",
		flags: piTable(map[piFlag][]string{
			piBool:    piBools,
			piValue:   append(slices.Clone(piValues), "--mode"),
			piMessage: {"--print", "-p"},
			piPattern: {"--list-models"},
		}),
		commands: piCommands074,
	}
})

// pi1 are pi 1.x's rules, read from 1.6.0.
var pi1 = sync.OnceValue(func() piRules {
	return piRules{
		release: "1.6.0",
		flags: piTable(map[piFlag][]string{
			piBool:     append(slices.Clone(piBools), "--no-mcp", "--approve", "-a", "--no-approve", "-na"),
			piValue:    append(slices.Clone(piValues), "--session-id", "--exclude-tools", "-xt"),
			piRequired: {"--name", "-n"},
			piWord:     {"--mode", "--use-theme", "--tui-mode"},
			piMessage:  {"--print", "-p"},
			piPattern:  {"--list-models"},
		}),
		commands: append(words{"auth", "mcp"}, piCommands074...),
		newer:    true,
	}
})

// piRulesFor picks the rules of a release: 0.x reads as 0.74, 1.x and
// later (or unknown) as the newest.
func piRulesFor(version string) piRules {
	if !atLeast(version, 1, 0) {
		return pi074()
	}
	return pi1()
}

type piArgs struct {
	print, cont, resume, noSession, info       bool
	mode, session, fork, sessionDir, sessionID string
	sessionAt, contAt                          int // argv indexes of --session's value and of -c
	name                                       string
	nameAt                                     []int // argv indexes of every -n/--name that took a value
	// What pi's parseArgs collects besides: its messages, @file arguments,
	// unknown --flags (extension flags) and unknown short options.
	messages, fileArgs, unknown, badShort []string
}

// parsePi reads argv by the newest rules.
func parsePi(argv []string) piArgs { return pi1().parse(argv) }

// parse mirrors pi's parseArgs: known flags by their table, then @file,
// then any other --flag as an extension's (a following plain word is its
// value), any other -x as an error, the rest as messages.
func (r piRules) parse(argv []string) piArgs {
	a := piArgs{sessionAt: -1, contAt: -1}
	if len(argv) > 1 && r.commands.has(argv[1]) {
		a.info = true
		return a
	}
	for i := 1; i < len(argv); i++ {
		arg, next, hasNext := argv[i], "", i+1 < len(argv)
		if hasNext {
			next = argv[i+1]
		}
		if arg == "--" && r.newer {
			for _, m := range argv[i+1:] {
				if f, ok := strings.CutPrefix(m, "@"); ok {
					a.fileArgs = append(a.fileArgs, f)
				} else {
					a.messages = append(a.messages, m)
				}
			}
			break
		}
		kind, known := r.flags[arg]
		if known && kind == piValue && !hasNext {
			known = false // pi's branch wants a value: the flag falls to the rules below
		}
		if !known {
			i = a.other(argv, i)
			continue
		}
		took := false
		switch kind {
		case piValue, piRequired:
			took = hasNext
		case piWord:
			took = hasNext && !strings.HasPrefix(next, "-")
		case piMessage:
			took = hasNext && !strings.HasPrefix(next, "@") && (!strings.HasPrefix(next, "-") || strings.HasPrefix(next, "---"))
		case piPattern:
			took = hasNext && !strings.HasPrefix(next, "-") && !strings.HasPrefix(next, "@")
		}
		if took {
			i++
		}
		a.known(arg, next, took, i)
	}
	return a
}

// known records what a known flag means; at is the index of its value
// when took.
func (a *piArgs) known(arg, value string, took bool, at int) {
	switch arg {
	case "--help", "-h", "--version", "-v", "--list-models", "--export":
		a.info = true
	case "--continue", "-c":
		a.cont, a.contAt = true, at
	case "--resume", "-r":
		a.resume = true
	case "--no-session":
		a.noSession = true
	case "--print", "-p":
		a.print = true
		if took {
			a.messages = append(a.messages, value)
		}
	}
	if !took {
		return
	}
	switch arg {
	case "--mode":
		if value == "text" || value == "json" || value == "rpc" {
			a.mode = value
		}
	case "--session":
		a.session, a.sessionAt = value, at
	case "--fork":
		a.fork = value
	case "--session-dir":
		a.sessionDir = value
	case "--session-id":
		a.sessionID = value
	case "--name", "-n":
		a.name, a.nameAt = value, append(a.nameAt, at-1)
	}
}

// other reads an argument that is no known flag and returns the index of
// the last argument it used.
func (a *piArgs) other(argv []string, i int) int {
	arg := argv[i]
	switch {
	case strings.HasPrefix(arg, "@"):
		a.fileArgs = append(a.fileArgs, arg[1:])
	case strings.HasPrefix(arg, "--"):
		name, _, inline := strings.Cut(arg[2:], "=")
		a.unknown = append(a.unknown, name)
		if !inline && i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "-") && !strings.HasPrefix(argv[i+1], "@") {
			return i + 1
		}
	case strings.HasPrefix(arg, "-"):
		a.badShort = append(a.badShort, arg)
	default:
		a.messages = append(a.messages, arg)
	}
	return i
}

// piHeader is the first line of a pi session file.
type piHeader struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

func piSessionID(path string) string {
	var h piHeader
	if firstLine(path, &h) && h.Type == "session" {
		return h.ID
	}
	return ""
}

// piHeaderID reads pi's header line: {"type":"session","id":ID}.
func piHeaderID(head *json.Decoder) (string, bool) {
	var h piHeader
	if head.Decode(&h) != nil || h.Type != "session" {
		return "", false
	}
	return h.ID, true
}

// pi reads pi's command line (docs/spec.md §4.1) by the rules of its release. When
// the release is unknown it applies the newest rules, unless the tested
// releases read argv differently: then argv is left as it is and the file
// is unknown.
func pi(argv []string, env Env) Plan {
	if env.Version != "" {
		return piRulesFor(env.Version).plan(argv, env)
	}
	p, q := pi1().plan(argv, env), pi074().plan(argv, env)
	if !slices.Equal(p.Files, q.Files) || !slices.Equal(p.Argv, q.Argv) || (p.Unknown == "") != (q.Unknown == "") ||
		!slices.Equal(p.Watch, q.Watch) {
		return Plan{Argv: argv, Mode: p.Mode, Watch: slices.Compact(append(p.Watch, q.Watch...)),
			Unknown: "pi's release is unknown, and pi " + pi074().release + " and " + pi1().release + " read this command line differently"}
	}
	return p
}

// plan is what pi does with argv by these rules.
func (r piRules) plan(argv []string, env Env) Plan {
	argv = slices.Clone(argv)
	a := r.parse(argv)
	p := Plan{Argv: argv, Mode: piMode(a, env)}
	if a.info || a.noSession {
		p.Mode = ""
		return p
	}
	w, err := r.where(a, env)
	if err != nil {
		return Plan{Argv: argv, Err: err}
	}
	switch {
	case a.fork != "":
		// The source is only read; the fork is a new file.
	case a.session != "":
		if !r.planSession(&p, a, w, env) {
			return p
		}
	case a.resume:
		r.planPicker(&p, a, env)
		return p
	case a.cont:
		if f := r.continueFile(w.dir, w.filter, env); f != "" {
			p.Files, p.SessionID = []string{f}, piSessionID(f)
			piPin(&p, a, a.contAt, f, env)
		}
		// else nothing to continue: pi starts a new session
	case r.newer && a.sessionID != "":
		p.SessionID = a.sessionID
		if f := piFindExact(w.dir, a.sessionID, w.filter, env); f != "" {
			p.Files = []string{f}
		} else {
			p.Unknown = "--session-id names a session that does not exist yet"
		}
	default:
		// A new session. pi names its file itself: pi 0.74 writes a fresh id
		// into the header of a file named for it, so a name chosen here would
		// not be the session's id. The companion claims the file at
		// session_start, before pi's first write; without it, the watch does.
	}
	p.Watch = []Watch{{Dir: w.dir, Pattern: "*.jsonl"}} // interactive /new and /fork write new files
	return p
}

// piWhere is where pi looks for the sessions of a command line.
type piWhere struct {
	dir, agentDir string
	// custom: dir is a --session-dir (or its setting), not the default.
	custom bool
	// filter: pi lists only the current folder's sessions in dir.
	filter bool
}

// where finds the session folder pi uses for a.
func (r piRules) where(a piArgs, env Env) (piWhere, error) {
	agentDir := env.Getenv("PI_CODING_AGENT_DIR")
	if agentDir == "" {
		agentDir = filepath.Join(env.Home, ".pi", "agent")
	}
	agentDir = abs(agentDir, env)
	dir, custom, err := r.sessionDir(a, agentDir, env)
	if err != nil {
		return piWhere{}, err
	}
	// 1.x lists only the current folder's sessions in a custom session dir
	// (one that is not the default for this cwd).
	filter := r.newer && custom && dir != filepath.Join(agentDir, "sessions", PiProjectDir(env.Cwd))
	return piWhere{dir: dir, agentDir: agentDir, custom: custom, filter: filter}, nil
}

// planSession fills p for --session, a path or an id (prefix); it reports
// whether pi goes on to write in the session folder (false: pi reads no
// session padrun can see, or exits).
func (r piRules) planSession(p *Plan, a piArgs, w piWhere, env Env) bool {
	if strings.ContainsAny(a.session, `/\`) || strings.HasSuffix(a.session, ".jsonl") {
		f, ok := r.path(a.session, env)
		if !ok {
			p.Unknown = "--session names a URL padrun cannot read as a file"
			return false
		}
		p.Files, p.SessionID = []string{f}, piSessionID(f)
		return true
	}
	var f string
	if r.newer {
		f = piFind1(w.dir, w.agentDir, w.custom, w.filter, a.session, env)
	} else {
		f = piFind074(w.dir, w.agentDir, a.session)
	}
	switch f {
	case piFork: // pi offers to fork a session of another project: a new file
		return true
	case "":
		return false // pi exits: no session matches
	}
	p.Files, p.SessionID = []string{f}, piSessionID(f)
	piPin(p, a, a.sessionAt, f, env)
	return true
}

// planPicker fills p for --resume, which opens pi's picker.
func (r piRules) planPicker(p *Plan, a piArgs, env Env) {
	p.Unknown = "--resume opens a picker"
	if name := strings.TrimSpace(a.name); r.newer && !env.NoCompanion && name != "" {
		// pi 1.x appends --name's session_info line to the picked file
		// before it loads extensions (pi 1.6.0 dist/main.js,
		// appendSessionInfo), so before the companion can claim it: the
		// companion names the session once padrun holds it.
		for _, at := range slices.Backward(a.nameAt) {
			p.Argv = slices.Delete(p.Argv, at, at+2)
		}
		p.CompanionEnv = []string{"PADRUN_PI_NAME=" + name}
	}
}

// piPin rewrites the argument at (--session's value, or --continue) to name
// path, so pi opens the file padrun holds.
func piPin(p *Plan, a piArgs, at int, path string, env Env) {
	if env.NoPin {
		return
	}
	if at == a.contAt {
		p.Argv[at] = "--session"
		p.Argv = slices.Insert(p.Argv, at+1, path)
		return
	}
	p.Argv[at] = path
}

func piMode(a piArgs, env Env) string {
	switch {
	case a.mode == "rpc":
		return "rpc"
	case a.mode == "json":
		return "json"
	case a.print || !env.StdinTTY:
		return "print"
	}
	return "interactive"
}

// path makes a --session or --session-dir value absolute as pi does: 0.74
// takes it as it is (relative to cwd), 1.x also expands ~ and file:// URLs.
func (r piRules) path(v string, env Env) (string, bool) {
	if !r.newer {
		if !filepath.IsAbs(v) {
			v = filepath.Join(env.Cwd, v)
		}
		return filepath.Clean(v), true
	}
	if strings.HasPrefix(v, "file://") {
		u, err := url.Parse(v)
		if err != nil || (u.Host != "" && u.Host != "localhost") {
			return "", false
		}
		v = u.Path
	}
	return abs(v, env), true
}

// sessionDir: --session-dir > $PI_CODING_AGENT_SESSION_DIR > sessionDir
// in settings.json > <agentDir>/sessions/<enc(cwd)>. custom is true for
// the first three. A settings.json that is not a regular file of the
// user's or root's is an error.
func (r piRules) sessionDir(a piArgs, agentDir string, env Env) (dir string, custom bool, err error) {
	if a.sessionDir != "" {
		if d, ok := r.path(a.sessionDir, env); ok {
			return d, true, nil
		}
	}
	if d := env.Getenv("PI_CODING_AGENT_SESSION_DIR"); d != "" {
		return abs(d, env), true, nil
	}
	b, err := readSettings("pi", filepath.Join(agentDir, "settings.json"))
	if err != nil {
		return "", false, err
	}
	if b != nil {
		var s struct {
			SessionDir string `json:"sessionDir"`
		}
		if json.Unmarshal(b, &s) == nil && s.SessionDir != "" {
			return abs(s.SessionDir, env), true, nil
		}
	}
	return filepath.Join(agentDir, "sessions", PiProjectDir(env.Cwd)), false, nil
}

// PiProjectDir encodes cwd as pi names its per-project session folder.
func PiProjectDir(cwd string) string {
	s := cwd
	if strings.HasPrefix(s, "/") || strings.HasPrefix(s, `\`) {
		s = s[1:]
	}
	return "--" + strings.NewReplacer("/", "-", `\`, "-", ":", "-").Replace(s) + "--"
}

// piFork is what a session lookup returns when pi would fork a session it
// found in another project into a new file.
const piFork = "\x00fork"

// piFind074 is pi 0.74's lookup of an id prefix: the current project's
// sessions ranked by last activity, else every project's under the agent
// dir (whatever the session dir), which pi forks.
func piFind074(dir, agentDir, prefix string) string {
	if f := piFindID(dir, prefix); f != "" {
		return f
	}
	if piFindIDAnywhere(agentDir, prefix) != "" {
		return piFork
	}
	return ""
}

// piFindID returns the session of dir that pi 0.74 picks for an id prefix:
// of those whose id starts with prefix, the one of latest activity.
func piFindID(dir, prefix string) string {
	return piMatch(piList(dir), prefix)
}

// piFindIDAnywhere is pi 0.74's global search: every project's sessions,
// ranked together by latest activity.
func piFindIDAnywhere(agentDir, prefix string) string {
	des, _ := os.ReadDir(filepath.Join(agentDir, "sessions"))
	var dirs []string
	for _, de := range des {
		if de.IsDir() {
			dirs = append(dirs, filepath.Join(agentDir, "sessions", de.Name()))
		}
	}
	return piMatch(piList(dirs...), prefix)
}

// piFind1 is pi 1.x's resolveSessionPath for an id: the exact id in the
// session dir, then a prefix among the dir's sessions ranked by last
// activity, both only among the current folder's when filter is set; else
// a global search (a custom dir's every session, or every project's), exact
// id first, which pi forks.
func piFind1(dir, agentDir string, custom, filter bool, id string, env Env) string {
	if f := piFindExact(dir, id, filter, env); f != "" {
		return f
	}
	local := piList1(dir)
	if filter {
		local = slices.DeleteFunc(slices.Clone(local), func(s piSession) bool { return !piSameCwd(s.cwd, env) })
	}
	if f := piMatch(local, id); f != "" {
		return f
	}
	all := local
	switch {
	case custom:
		all = piList1(dir)
	default:
		all = piListAll1(agentDir)
	}
	for _, s := range all {
		if s.id == id {
			return piFork
		}
	}
	if piMatch(all, id) != "" {
		return piFork
	}
	return ""
}

// piFindExact is pi 1.x's findById: the first file of dir, in name order,
// whose header has this id (and, when filter is set, the current folder
// as its cwd).
func piFindExact(dir, id string, filter bool, env Env) string {
	des, _ := os.ReadDir(dir)
	for _, de := range des {
		if !strings.HasSuffix(de.Name(), ".jsonl") {
			continue
		}
		p := filepath.Join(dir, de.Name())
		h, ok := piHeader1(p)
		if ok && h.id == id && (!filter || piSameCwd(h.cwd, env)) {
			return p
		}
	}
	return ""
}

// continueFile is the file -c continues: the newest by mtime of dir with a
// session header (0.74: its first line, within 512 bytes; 1.x: its first
// line that parses, within 1 MiB, and its cwd the current folder's when
// filter is set); empty when there is none.
func (r piRules) continueFile(dir string, filter bool, env Env) string {
	return newest([]string{dir}, "*.jsonl", func(path string) bool {
		if !r.newer {
			return piHeader074(path)
		}
		h, ok := piHeader1(path)
		return ok && (!filter || piSameCwd(h.cwd, env))
	})
}

// piSameCwd is pi 1.x's sessionCwdMatches: a header cwd that resolves to
// the current folder.
func piSameCwd(cwd string, env Env) bool {
	return cwd != "" && abs(cwd, env) == env.Cwd
}
