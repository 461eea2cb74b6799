package harness

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

var (
	// geminiValue are the options of gemini's yargs parser that take a
	// value (type string or array with nargs 1): bundle/gemini-*.js of
	// 0.43.0 and 0.61.0 declare the same ones, 0.61 adds
	// --fake-responses-non-strict. -r/--resume and -w/--worktree take one
	// only when the next word is not an option.
	geminiValue = words{
		"-m", "--model", "-p", "--prompt", "-i", "--prompt-interactive",
		"--approval-mode", "--policy", "--admin-policy", "--allowed-mcp-server-names",
		"--allowed-tools", "-e", "--extensions", "--session-file", "--session-id",
		"--delete-session", "--include-directories", "-o", "--output-format",
		"--fake-responses", "--fake-responses-non-strict", "--record-responses",
	}
	// geminiNoSession are gemini's subcommands: none runs a chat.
	geminiNoSession = words{
		"mcp", "extensions", "extension", "skills", "skill",
		"hooks", "hook", "gemma",
	}
)

// geminiLatest is what gemini's coerce makes of a bare -r (RESUME_LATEST).
const geminiLatest = "latest"

type geminiArgs struct {
	resume, sessionID, sessionFile, output string
	resumeSet, print, acp, info, worktree  bool
	query                                  bool // a positional prompt
	resumeAt                               int  // the index of -r's value, or of -r when bare
	resumeBare, resumeEq                   bool
}

// parseGemini reads gemini's top-level command line as its yargs parser
// does.
func parseGemini(argv []string) geminiArgs {
	a := geminiArgs{resumeAt: -1}
	words := 0
	for i := 1; i < len(argv); i++ {
		arg := argv[i]
		if arg == "--" {
			if i+1 < len(argv) {
				a.query = true
			}
			break
		}
		name, value, hasValue := strings.Cut(arg, "=")
		next := func() (string, bool) {
			if hasValue {
				return value, true
			}
			if i+1 < len(argv) {
				i++
				return argv[i], true
			}
			return "", false
		}
		switch {
		case name == "-r" || name == "--resume":
			a.resumeSet, a.resumeEq = true, hasValue
			switch {
			case hasValue:
				a.resume, a.resumeAt = strings.TrimSpace(value), i
			case i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "-"):
				i++
				a.resume, a.resumeAt = strings.TrimSpace(argv[i]), i
			default:
				a.resumeBare, a.resumeAt = true, i
			}
			if a.resume == "" {
				a.resume = geminiLatest
			}
		case name == "-w" || name == "--worktree":
			a.worktree = true
			if !hasValue && i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "-") {
				i++
			}
		case name == "--session-id":
			a.sessionID, _ = next()
			a.sessionID = strings.TrimSpace(a.sessionID)
		case name == "--session-file":
			a.sessionFile, _ = next()
		case name == "-o" || name == "--output-format":
			a.output, _ = next()
		case name == "-p" || name == "--prompt":
			a.print = true
			next()
		case name == "--acp" || name == "--experimental-acp":
			a.acp = true
		case name == "-h" || name == "--help" || name == "-v" || name == "--version" ||
			name == "-l" || name == "--list-extensions" || name == "--list-sessions" || name == "--delete-session":
			a.info = true
			if name == "--delete-session" {
				next()
			}
		case geminiValue.has(name):
			next()
		case strings.HasPrefix(arg, "-"):
		default:
			words++
			if words == 1 && geminiNoSession.has(arg) {
				a.info = true
				return a
			}
			a.query = true
		}
	}
	return a
}

// geminiMode is the run's mode: -p (or a positional prompt with stdin not
// a terminal, gemini's isHeadlessMode) prints, -o json|stream-json prints
// JSON, --acp speaks ACP.
func geminiMode(a geminiArgs, env Env) string {
	switch {
	case a.acp:
		return ModeRPC
	case a.output == "json" || a.output == "stream-json":
		return ModeJSON
	case a.print || (a.query && !env.StdinTTY):
		return ModePrint
	}
	return ModeInteractive
}

// geminiHome is ${GEMINI_CLI_HOME:-~}/.gemini (homedir() in
// chunk-JDPZ4CE3.js).
func geminiHome(env Env) string {
	h := env.Getenv("GEMINI_CLI_HOME")
	if h == "" {
		h = env.Home
	}
	return filepath.Join(abs(h, env), ".gemini")
}

// geminiProject is the project's folder under tmp/, by the slug that
// ProjectRegistry keeps in projects.json for the cwd; "" when the cwd has
// none yet (gemini then claims a new slug: no session of it exists), or
// when tmp/<slug>/.project_root names another folder (gemini would not
// take the slug: verifySlugOwnership).
func geminiProject(home string, env Env) string {
	b, err := readSettings("gemini projects.json", filepath.Join(home, "projects.json"))
	if err != nil || b == nil {
		return ""
	}
	var reg struct {
		Projects map[string]string `json:"projects"`
	}
	if json.Unmarshal(b, &reg) != nil {
		return ""
	}
	slug := reg.Projects[filepath.Clean(env.Cwd)]
	if slug == "" || strings.ContainsAny(slug, `/\`) || slug == "." || slug == ".." {
		return ""
	}
	dir := filepath.Join(home, "tmp", slug)
	if root, err := readSettings("gemini .project_root", filepath.Join(dir, ".project_root")); err == nil && root != nil &&
		filepath.Clean(strings.TrimSpace(string(root))) != filepath.Clean(env.Cwd) {
		return ""
	}
	return dir
}

// gemini reads Gemini CLI's command line (docs/spec.md §4.6).
func gemini(argv []string, env Env) Plan {
	a := parseGemini(argv)
	p := Plan{Argv: argv, Mode: geminiMode(a, env)}
	if a.info {
		p.Mode = ""
		return p
	}
	if a.worktree {
		p.Unknown = "--worktree runs in a git worktree that does not exist yet"
		return p
	}
	home := geminiHome(env)
	dir := geminiProject(home, env)
	// A new session's file is tmp/<slug>/chats/session-<ts>-<id8>.jsonl.
	// The project's chats/ folder is watched itself once the slug is known:
	// the watch follows only folders made while it runs, and a known
	// project's were made before. The slug of a cwd gemini has not seen
	// yet is chosen when it starts, under tmp/.
	watch := Watch{Dir: filepath.Join(home, "tmp"), Depth: 2, Pattern: "session-*.jsonl"}
	if dir != "" {
		watch = Watch{Dir: filepath.Join(dir, "chats"), Pattern: "session-*.jsonl"}
		// An in-app /resume (and ACP's session/load) opens any session of
		// the project and appends to it before any hook runs.
		p.Lease = []Watch{watch}
	}
	if a.sessionID != "" {
		p.SessionID = a.sessionID
	}
	if !a.resumeSet {
		// A new session, --session-id's included (gemini refuses an id
		// that exists), or --session-file's copy into a new file: F is
		// only read.
		p.Watch = []Watch{watch}
		return p
	}
	if dir == "" {
		// No session of this project: gemini warns and starts a new one.
		p.Watch = []Watch{watch}
		return p
	}
	s, ok := geminiFind(filepath.Join(dir, "chats"), a.resume, env)
	if !ok {
		// gemini finds no such session and fails, or starts anew.
		p.Watch = []Watch{watch}
		return p
	}
	p.Files, p.SessionID = []string{s.path}, s.id
	if a.resume != s.id && !env.NoPin {
		// latest or N: pin the UUID gemini took, so a session started
		// meanwhile cannot change its pick.
		switch {
		case a.resumeEq:
			p.Argv[a.resumeAt] = argv[a.resumeAt][:strings.Index(argv[a.resumeAt], "=")+1] + s.id
		case a.resumeBare:
			p.Argv = slices.Insert(p.Argv, a.resumeAt+1, s.id)
		default:
			p.Argv[a.resumeAt] = s.id
		}
	}
	return p
}

// geminiSession is one listed session: what getSessionFiles keeps of a
// file.
type geminiSession struct {
	path, id           string
	start, lastUpdated time.Time
}

// geminiFind resolves -r's value as SessionSelector.resolveSession does:
// "latest" is the listed session with the newest startTime; a UUID is the
// listed one with that id; N (1-based) is the N-th by startTime.
func geminiFind(chats, which string, env Env) (geminiSession, bool) {
	list := geminiList(chats, env)
	if len(list) == 0 {
		return geminiSession{}, false
	}
	if which == geminiLatest {
		return list[len(list)-1], true
	}
	for _, s := range list {
		if s.id == which {
			return s, true
		}
	}
	if n, err := strconv.Atoi(which); err == nil && strconv.Itoa(n) == which && n > 0 && n <= len(list) {
		return list[n-1], true
	}
	return geminiSession{}, false
}

// geminiList is getSessionFiles (chunk-2YTYPKEZ.js): the chats/ entries
// named session-*.json or session-*.jsonl in name order, those that parse
// with a sessionId and resumable content and are no subagent's; of one id
// the file last updated; sorted by startTime, stably.
func geminiList(chats string, env Env) []geminiSession {
	des, err := os.ReadDir(chats)
	if err != nil {
		return nil
	}
	var names []string
	for _, de := range des {
		n := de.Name()
		if strings.HasPrefix(n, "session-") && (strings.HasSuffix(n, ".json") || strings.HasSuffix(n, ".jsonl")) && de.Type().IsRegular() {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	var list []geminiSession
	at := map[string]int{}
	for _, n := range names {
		s, ok := geminiRead(filepath.Join(chats, n), env)
		if !ok {
			continue
		}
		if i, seen := at[s.id]; seen {
			if s.lastUpdated.After(list[i].lastUpdated) {
				list[i] = s
			}
			continue
		}
		at[s.id] = len(list)
		list = append(list, s)
	}
	slices.SortStableFunc(list, func(x, y geminiSession) int { return x.start.Compare(y.start) })
	return list
}

type geminiMessage struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	Content   json.RawMessage `json:"content"`
	ToolCalls []any           `json:"toolCalls"`
	Thoughts  []any           `json:"thoughts"`
}

// geminiRead is loadConversationRecord with metadataOnly: the header and
// $set lines give the metadata (a $set of messages replaces them), message
// lines add to them, $rewindTo cuts them back. A file of one JSON object
// is the legacy whole-file session.
func geminiRead(path string, env Env) (geminiSession, bool) {
	b, err := readSession(path)
	if err != nil {
		return geminiSession{}, false
	}
	meta, msgs := geminiRecords(b)
	str := func(k string) string {
		var s string
		_ = json.Unmarshal(meta[k], &s)
		return s
	}
	if str("sessionId") == "" || str("projectHash") == "" {
		var ok bool
		if meta, msgs, ok = geminiLegacy(b); !ok {
			return geminiSession{}, false
		}
	}
	if str("kind") == "subagent" || !geminiResumable(msgs, env.Version) {
		return geminiSession{}, false
	}
	// A missing time is read as now (loadConversationRecord's default).
	when := func(k, or string) time.Time {
		for _, s := range []string{str(k), str(or)} {
			if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
				return t.Truncate(time.Millisecond)
			}
		}
		return env.Now
	}
	return geminiSession{path: path, id: str("sessionId"), start: when("startTime", "lastUpdated"), lastUpdated: when("lastUpdated", "startTime")}, true
}

// geminiRecords replays the JSON lines of a session file: the metadata
// and the messages they leave.
func geminiRecords(b []byte) (map[string]json.RawMessage, []geminiMessage) {
	meta := map[string]json.RawMessage{}
	var msgs []geminiMessage
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, len(b)+1)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var rec map[string]json.RawMessage
		if json.Unmarshal(line, &rec) != nil {
			continue
		}
		switch {
		case isJSONString(rec["$rewindTo"]):
			var id string
			_ = json.Unmarshal(rec["$rewindTo"], &id)
			i := slices.IndexFunc(msgs, func(m geminiMessage) bool { return m.ID == id })
			if i < 0 {
				i = 0
			}
			msgs = msgs[:i]
		case isJSONString(rec["id"]):
			var m geminiMessage
			_ = json.Unmarshal(line, &m)
			msgs = append(msgs, m)
		case isJSONObject(rec["$set"]):
			var set map[string]json.RawMessage
			_ = json.Unmarshal(rec["$set"], &set)
			if ms, ok := set["messages"]; ok && bytes.HasPrefix(bytes.TrimSpace(ms), []byte("[")) {
				msgs = geminiMessages(ms)
			}
			for k, v := range set {
				meta[k] = v
			}
		case isJSONString(rec["sessionId"]) && isJSONString(rec["projectHash"]):
			for k, v := range rec {
				meta[k] = v
			}
			if ms, ok := rec["messages"]; ok {
				msgs = append(msgs, geminiMessages(ms)...)
			}
		}
	}
	return meta, msgs
}

// geminiLegacy reads the legacy whole-file session, one JSON object
// (parseLegacyRecordFallback): its metadata and messages, and whether it
// is one.
func geminiLegacy(b []byte) (map[string]json.RawMessage, []geminiMessage, bool) {
	var legacy struct {
		SessionID   string `json:"sessionId"`
		StartTime   string `json:"startTime"`
		LastUpdated string `json:"lastUpdated"`
		Kind        string `json:"kind"`
	}
	if json.Unmarshal(b, &legacy) != nil || legacy.SessionID == "" {
		return nil, nil, false
	}
	var whole struct {
		Messages json.RawMessage `json:"messages"`
	}
	_ = json.Unmarshal(b, &whole)
	meta := map[string]json.RawMessage{}
	for k, v := range map[string]string{"sessionId": legacy.SessionID, "startTime": legacy.StartTime, "lastUpdated": legacy.LastUpdated, "kind": legacy.Kind} {
		meta[k], _ = json.Marshal(v)
	}
	return meta, geminiMessages(whole.Messages), true
}

func geminiMessages(raw json.RawMessage) []geminiMessage {
	var all []json.RawMessage
	_ = json.Unmarshal(raw, &all)
	var out []geminiMessage
	for _, r := range all {
		var m geminiMessage
		if json.Unmarshal(r, &m) == nil && m.ID != "" {
			out = append(out, m)
		}
	}
	return out
}

// geminiResumable is whether gemini lists a session of these messages:
// 0.61 (hasResumableContent) wants a user message that is no command and
// no injected context, or an answer with text, tool calls or thoughts;
// 0.43 (hasUserOrAssistantMessage) any user or gemini message.
func geminiResumable(msgs []geminiMessage, version string) bool {
	for _, m := range msgs {
		if !atLeast(version, 0, 61) {
			if m.Type == "user" || m.Type == "gemini" {
				return true
			}
			continue
		}
		text := strings.TrimSpace(geminiText(m.Content))
		switch m.Type {
		case "user":
			if text != "" && !strings.HasPrefix(text, "/") && !strings.HasPrefix(text, "?") &&
				!strings.HasPrefix(text, "<session_context>") && !strings.HasPrefix(text, "<hook_context>") {
				return true
			}
		case "gemini":
			if text != "" || len(m.ToolCalls) > 0 || len(m.Thoughts) > 0 {
				return true
			}
		}
	}
	return false
}

// geminiText approximates partListUnionToString: a string, or the text of
// the parts; a part of another kind counts as text.
func geminiText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []map[string]json.RawMessage
	if json.Unmarshal(raw, &parts) != nil {
		var one map[string]json.RawMessage
		if json.Unmarshal(raw, &one) != nil {
			return ""
		}
		parts = append(parts, one)
	}
	var out strings.Builder
	for _, p := range parts {
		if t, ok := p["text"]; ok {
			var s string
			_ = json.Unmarshal(t, &s)
			out.WriteString(s)
		} else if len(p) > 0 {
			out.WriteString("[part]")
		}
	}
	return out.String()
}

func isJSONString(v json.RawMessage) bool {
	return len(v) > 0 && v[0] == '"'
}

func isJSONObject(v json.RawMessage) bool {
	return len(v) > 0 && v[0] == '{'
}

// geminiHooks is the system-defaults settings file that loads padrun's
// hooks into gemini (docs/spec.md §4.5): gemini merges it under the user's, the
// workspace's and the system's settings, concatenating each event's hooks,
// so the user's own hooks still run and the user's settings are not
// touched. SessionStart greets padrun and claims the file gemini has just
// opened; BeforeAgent claims the file a turn is about to write, before
// gemini records the prompt or calls the model. gemini runs hooks only in
// a trusted folder (its own rule for every settings hook).
func geminiHooks(hook string) []byte {
	one := func(event string) []map[string]any {
		return []map[string]any{{"hooks": []map[string]any{{"type": "command", "name": "padrun", "command": hook + " " + event}}}}
	}
	b, _ := json.Marshal(map[string]any{"hooks": map[string]any{"SessionStart": one("SessionStart"), "BeforeAgent": one("BeforeAgent")}})
	return b
}

// geminiHeaderID reads the first line of gemini's JSONL session file: its
// sessionId, beside projectHash.
func geminiHeaderID(head *json.Decoder) (string, bool) {
	var h struct {
		SessionID   string `json:"sessionId"`
		ProjectHash string `json:"projectHash"`
	}
	if head.Decode(&h) != nil || h.SessionID == "" || h.ProjectHash == "" {
		return "", false
	}
	return h.SessionID, true
}

// geminiDefaultsOccupied reports whether the user has a system-defaults
// file of their own, which padrun's would hide: gemini reads one only,
// $GEMINI_CLI_SYSTEM_DEFAULTS_PATH, else system-defaults.json beside the
// system settings.
func geminiDefaultsOccupied(getenv func(string) string) bool {
	if getenv("GEMINI_CLI_SYSTEM_DEFAULTS_PATH") != "" {
		return true
	}
	system := getenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH")
	if system == "" {
		system = geminiSystemSettings
	}
	_, err := os.Stat(filepath.Join(filepath.Dir(system), "system-defaults.json"))
	return err == nil
}

// geminiReads checks that gemini will read padrun's system-defaults file:
// gemini 0.61 reads one only when it and every folder above it belong to
// root and no one else may write them (isFileAndDirectorySecureSync); 0.43
// reads any.
func geminiReads(l Load) bool {
	return !atLeast(l.Version, 0, 61) || geminiRootOnly(l.Settings)
}
