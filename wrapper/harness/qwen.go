package harness

import (
	"bufio"
	"cmp"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// qwen's options by how yargs takes their values (qwen 0.24.4,
// chunks/chunk-BSIOCNDK.js DEFAULT_COMMAND_OPTIONS and
// TOP_LEVEL_GLOBAL_OPTIONS; the same names in 0.21.2): a string or number
// takes the next word unless it starts with a dash, an array every word up
// to the next flag, a boolean an explicit "true" or "false".
var (
	qwenValue = words{
		"-m", "--model", "-p", "--prompt", "-i", "--prompt-interactive",
		"--system-prompt", "--append-system-prompt", "--output-style", "--sandbox-image",
		"--approval-mode", "--channel", "--mcp-config", "--openai-logging-dir",
		"--openai-api-key", "--openai-base-url", "--input-format", "-o",
		"--output-format", "--json-fd", "--json-file", "--json-schema",
		"--input-file", "-r", "--resume", "--session-id", "--sandbox-session-id",
		"--worktree", "--max-session-turns", "--max-wall-time", "--max-tool-calls",
		"--max-subagent-depth", "--auth-type", "--telemetry-target",
		"--telemetry-otlp-endpoint", "--telemetry-otlp-protocol", "--telemetry-outfile",
		"--proxy",
	}
	qwenList = words{
		"--fallback-model", "--allowed-mcp-server-names", "--allowed-tools", "-e",
		"--extensions", "--include-directories", "--add-dir", "--core-tools",
		"--exclude-tools", "--disabled-slash-commands",
	}
	// qwenCommands are qwen's subcommands (chunk-WH7PDTZL.js): none opens
	// a chat session of the default command.
	qwenCommands = words{
		"auth", "board", "channel", "extensions", "hooks", "mcp",
		"review", "sandbox", "serve", "sessions", "update",
	}
)

type qwenArgs struct {
	print, cont, fork, acp, noRecord, info, query  bool
	resume                                         bool // -r given, with or without an id
	resumeID, sessionID, outputFormat, inputFormat string
	worktree                                       bool
	contAt, contEnd                                int // argv indexes: -c and past its value
}

func parseQwen(argv []string) qwenArgs {
	a := qwenArgs{contAt: -1}
	positional := false
	for i := 1; i < len(argv); i++ {
		arg := argv[i]
		if arg == "--" {
			a.query = a.query || i+1 < len(argv)
			break
		}
		name, value, hasValue := arg, "", false
		if strings.HasPrefix(arg, "-") {
			name, value, hasValue = strings.Cut(arg, "=")
		}
		takeValue := func() {
			if !hasValue && i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "-") {
				i++
				value = argv[i]
			}
		}
		// yargs reads a boolean's explicit value too: --continue false.
		takeBool := func() bool {
			if hasValue {
				return value != "false"
			}
			if i+1 < len(argv) && (argv[i+1] == "true" || argv[i+1] == "false") {
				i++
				return argv[i] == "true"
			}
			return true
		}
		switch {
		case name == "-c" || name == "--continue":
			at := i
			if a.cont = takeBool(); a.cont {
				a.contAt, a.contEnd = at, i+1
			}
		case name == "--fork-session":
			a.fork = takeBool()
		case name == "--acp" || name == "--experimental-acp":
			a.acp = takeBool()
		case name == "--chat-recording":
			a.noRecord = !takeBool()
		case name == "--no-chat-recording":
			a.noRecord = true
		case name == "-h" || name == "--help" || name == "-v" || name == "--version" ||
			name == "-l" || name == "--list-extensions":
			a.info = true
		case qwenValue.has(name):
			takeValue()
			switch name {
			case "-p", "--prompt":
				a.print = true
			case "-r", "--resume":
				a.resume, a.resumeID = true, value
			case "--session-id":
				a.sessionID = value
			case "-o", "--output-format":
				a.outputFormat = value
			case "--input-format":
				a.inputFormat = value
			case "--worktree":
				a.worktree = true
			}
		case qwenList.has(name):
			for !hasValue && i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "-") {
				i++
			}
		case strings.HasPrefix(arg, "-"):
			takeBool() // every other option qwen knows is a boolean
		default:
			if !positional && qwenCommands.has(arg) {
				a.info = true
				return a
			}
			positional, a.query = true, true
		}
	}
	return a
}

// mode is the run's mode, as padrun records it.
func (a qwenArgs) mode() string {
	switch {
	case a.acp || a.inputFormat == "stream-json":
		return ModeRPC
	case a.outputFormat == "json" || a.outputFormat == "stream-json":
		return ModeJSON
	case a.print || a.query:
		// A positional prompt is one-shot in qwen (QUERY_POSITIONAL).
		return ModePrint
	}
	return ModeInteractive
}

// qwenSessionFile is qwen's SESSION_FILE_PATTERN: the files its listing
// ranks (chunk-DPEB6S2R.js).
// (A loop, not a regexp: a bounded repeat compiles at every start.)
func qwenSessionFile(name string) bool {
	id, ok := strings.CutSuffix(name, ".jsonl")
	if !ok || len(id) < 32 || len(id) > 36 {
		return false
	}
	for _, c := range []byte(id) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' || c == '-') {
			return false
		}
	}
	return true
}

// qwen reads Qwen Code's command line (docs/spec.md §4.6).
func qwen(argv []string, env Env) Plan {
	a := parseQwen(argv)
	p := Plan{Argv: argv, Mode: a.mode()}
	if a.info || a.noRecord {
		p.Mode = ""
		return p
	}
	if a.worktree {
		p.Unknown = "--worktree runs in a folder that does not exist yet"
		return p
	}
	// Storage.getRuntimeBaseDir (chunk-EL2S73QY.js): QWEN_RUNTIME_DIR,
	// else advanced.runtimeOutputDir of the settings, else QWEN_HOME, else
	// ~/.qwen.
	home := cmp.Or(env.Getenv("QWEN_HOME"), filepath.Join(env.Home, ".qwen"))
	base := env.Getenv("QWEN_RUNTIME_DIR")
	if base == "" && qwenSettingsMoveRuntime(abs(home, env), env.Cwd) {
		p.Unknown = "qwen's settings move its runtime folder (advanced.runtimeOutputDir)"
		return p
	}
	base = abs(cmp.Or(base, home), env)
	dir := filepath.Join(base, "projects", claudeProjectDir(qwenProject(env.Cwd)), "chats")
	watch := Watch{Dir: dir, Pattern: "*.jsonl"}
	p.Watch = []Watch{watch}
	file := func(id string) string { return filepath.Join(dir, id+".jsonl") }
	switch {
	case a.fork:
		// The source is only read; the fork is a new file, claimed as such.
	case a.resume && a.cont, a.sessionID != "" && (a.resume || a.cont):
		// qwen refuses these itself, before it writes.
	case a.resume && a.resumeID == "":
		p.Unknown = "--resume without a session id opens a picker"
		p.Watch = nil
	case a.resume:
		p.Files, p.SessionID = []string{file(a.resumeID)}, a.resumeID
	case a.sessionID != "":
		p.Files, p.SessionID = []string{file(a.sessionID)}, a.sessionID
	case a.cont:
		f, why := qwenLatest(dir, env.Cwd)
		if why != "" {
			p.Unknown, p.Watch = why, nil
			break
		}
		if f == "" {
			break // nothing to continue: qwen starts a new session
		}
		id := strings.TrimSuffix(filepath.Base(f), ".jsonl")
		p.Files, p.SessionID = []string{f}, id
		if !env.NoPin && a.contAt > 0 {
			p.Argv = append(append(slices.Clone(argv[:a.contAt]), "--resume", id), argv[a.contEnd:]...)
		}
	}
	return p
}

// qwenSettingsMoveRuntime reports whether a settings file qwen reads names
// a runtime folder of its own: padrun does not merge qwen's settings
// scopes, so such a run's folder is unknown.
func qwenSettingsMoveRuntime(home, cwd string) bool {
	for _, f := range []string{filepath.Join(home, "settings.json"), filepath.Join(cwd, ".qwen", "settings.json")} {
		b, err := os.ReadFile(f)
		if err == nil && strings.Contains(string(b), "runtimeOutputDir") {
			return true
		}
	}
	return false
}

// qwenMaxFiles is MAX_FILES_TO_PROCESS: qwen's listing looks at no more
// files than this.
const qwenMaxFiles = 10000

// qwenLatest is the session qwen -c continues (SessionService.loadLastSession
// = listSessions({size: 1}), chunk-DPEB6S2R.js, the same in 0.21.2): the
// newest by mtime of the chats/ files named like a session whose first
// record belongs to this project. why is set when padrun cannot tell
// which file qwen's tolerant reader would take.
func qwenLatest(dir, cwd string) (file, why string) {
	des, err := os.ReadDir(dir) // in name order, as libuv's scandir
	if err != nil {
		return "", ""
	}
	type cand struct {
		path  string
		mtime int64
	}
	var files []cand
	for _, de := range des {
		if !qwenSessionFile(de.Name()) {
			continue
		}
		p := filepath.Join(dir, de.Name())
		fi, err := os.Stat(p) // statSync follows links
		if err != nil {
			continue
		}
		files = append(files, cand{p, fi.ModTime().UnixNano()})
	}
	slices.SortStableFunc(files, func(x, y cand) int { return cmp.Compare(y.mtime, x.mtime) })
	for n, f := range files {
		if n >= qwenMaxFiles {
			break
		}
		rec, ok := qwenFirstRecord(f.path)
		if !ok {
			return "", "the first line of " + filepath.Base(f.path) + " is not one JSON record"
		}
		if rec == nil {
			continue // no records: qwen skips the file
		}
		if qwenBelongs(dir, rec.SessionID, rec.Cwd, cwd) {
			return f.path, ""
		}
	}
	return "", ""
}

type qwenRecord struct {
	SessionID string `json:"sessionId"`
	Cwd       string `json:"cwd"`
}

// qwenFirstRecord reads a file's first non-blank line: nil when there is
// none; ok is false when it is not a JSON object, where qwen's tolerant
// parser may still find records padrun would not.
func qwenFirstRecord(path string) (rec *qwenRecord, ok bool) {
	f, err := openSession(path)
	if err != nil {
		return nil, true // qwen reads no records from it
	}
	defer f.Close()
	r := bufio.NewReader(io.LimitReader(f, 1<<24))
	for {
		line, err := r.ReadString('\n')
		if t := strings.TrimSpace(line); t != "" {
			var v qwenRecord
			if json.Unmarshal([]byte(t), &v) != nil {
				return nil, false
			}
			return &v, true
		}
		if err != nil {
			return nil, true
		}
	}
}

// qwenBelongs is sessionBelongsToCurrentProject: the record's cwd is the
// project, or a qwen worktree of it, or the session's runtime status names
// the project as its workDir.
func qwenBelongs(chats, sessionID, recordCwd, cwd string) bool {
	if qwenProject(recordCwd) == qwenProject(cwd) {
		return true
	}
	marker := string(filepath.Separator) + ".qwen" + string(filepath.Separator) + "worktrees" + string(filepath.Separator)
	if i := strings.LastIndex(recordCwd, marker); i > 0 && qwenProject(recordCwd[:i]) == qwenProject(cwd) {
		return true
	}
	var status struct {
		SessionID string `json:"sessionId"`
		WorkDir   string `json:"workDir"`
	}
	b, err := os.ReadFile(filepath.Join(chats, sessionID+".runtime.json"))
	return err == nil && json.Unmarshal(b, &status) == nil && status.SessionID == sessionID && qwenProject(status.WorkDir) == qwenProject(cwd)
}

// qwenProject is the form of a folder qwen hashes and names its project
// by (getProjectHash, sanitizeCwd): lowercased on Windows.
func qwenProject(dir string) string {
	if runtime.GOOS == "windows" {
		return strings.ToLower(dir)
	}
	return dir
}

// qwenHookSettings is the system defaults file that loads padrun's hook
// into qwen: at SessionStart, which qwen awaits in startChat for every
// session it opens (qwen 0.24.4 chunk-DPEB6S2R.js: startup, resume, clear)
// before it writes to the session's file (qwen_companion: -r ID and the
// TUI's /resume), and at UserPromptSubmit, before a turn is recorded, so
// that a session qwen reached without a SessionStart (/branch) is claimed
// before it is appended to. qwen 0.24.4 reads the system defaults' hooks
// always (LoadedSettings.getSystemHooks); 0.21.2 only through its merged
// settings, when the user's settings.json has no hooks of its own
// (loadCliConfig: userHooks ?? settings.hooks): then the companion never
// greets, and padrun says so.
func qwenHookSettings(hook string) []byte {
	return hookSettings(hook, "SessionStart", "UserPromptSubmit")
}

// qwenDefaultsOccupied reports whether qwen has a system defaults file
// that padrun's would hide (getSystemDefaultsPath, storage-paths-lite.ts):
// $QWEN_CODE_SYSTEM_DEFAULTS_PATH, else system-defaults.json beside the
// system settings.
func qwenDefaultsOccupied(getenv func(string) string) bool {
	path := getenv("QWEN_CODE_SYSTEM_DEFAULTS_PATH")
	if path == "" {
		settings := getenv("QWEN_CODE_SYSTEM_SETTINGS_PATH")
		if settings == "" {
			switch runtime.GOOS {
			case "darwin":
				settings = "/Library/Application Support/QwenCode/settings.json"
			case "windows":
				settings = `C:\ProgramData\qwen-code\settings.json`
			default:
				settings = "/etc/qwen-code/settings.json"
			}
		}
		path = filepath.Join(filepath.Dir(settings), "system-defaults.json")
	}
	_, err := os.Stat(path)
	return err == nil
}
