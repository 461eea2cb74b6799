// Package harness reads a harness's command line: which session files it is
// about to write, its session id, its mode, and the argv to run.
//
// Each adapter mirrors its harness's own argument parser closely enough to
// find the flags that choose a session file, and leaves every other argument
// alone. What was checked against the real CLIs is in docs/spec.md §4.
//
// A harness is one Adapter value, declared in adapters.go; nothing outside
// this package knows a harness by its name. A new harness provides, in this
// folder (TestAdapters_Complete refuses a declaration that lacks one):
//   - Name, the command's base name that selects it, and Agent, the agent
//     name recorded when none is given;
//   - read, its argv rules: a func(argv, Env) Plan in its own file, quoting
//     the shipped code it mirrors with its version;
//   - Env, the variables read reads, named in padrun's help
//     (TestHelp_NamesEveryVariable checks them against the code);
//   - Sessions: its session folder(s), file pattern and depth (what read's
//     Watch names), and how it ranks its sessions for "the latest";
//   - Packages, the npm packages it ships in, and Oldest and Newest, the
//     releases test.sh installs (TestVersions_MatchTestSh keeps them equal);
//   - HiddenMarkers, when the harness's own listing or cleanup would take
//     <file>.live.json for a session of its own: the session file names
//     whose markers are named .<file>.padrun.json instead;
//   - Unvetoed, when an in-harness session switch cannot be refused: the
//     warning an interactive run gives;
//   - Companion, when it has one: how argv loads it, the greeting's flag,
//     whether it can cancel a switch, and when a run loads it; when its
//     hooks run padrun again, the hook's command line and the function
//     that answers it (`padrun companion SIDE` dispatches to it, FindHook);
//   - Held, when the harness can go on from a held session without writing
//     it (pi --fork): the hint of the refusal;
//   - InUse, when the harness keeps in-use locks of its own beside a
//     session file (copilot's inuse.<PID>.lock): how to list them;
//   - Records, when the harness leaves records of its live sessions
//     (claude's sessions/<pid>.json), and ErasesArgv, when it overwrites its
//     command line: how padrun finds a writer of it that it did not start;
//   - header, when its session files name their id in their first lines:
//     how to read it (HeaderID);
//   - release, when its launcher may run another release than its package
//     (copilot's auto-update cache): how to read the one that runs;
//   - testdata scripts in cmd/padrun/testdata/harness for both columns.
package harness

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Plan is what an adapter learned from the child's argv and environment.
type Plan struct {
	Harness   string   // pi, claude, codex or none
	Files     []string // session files to guard, absolute
	SessionID string   // the harness's session id, when known
	Mode      string   // print, json, rpc or interactive; empty when unknown
	Argv      []string // the argv to run: pinned, or as given
	// Unknown says why the harness will write a file that cannot be named
	// before it runs (a picker, an unsupported flag); empty otherwise.
	Unknown string
	// Watch lists the folders where the child may create new session files
	// while it runs.
	Watch []Watch
	// Lease lists the folders whose session files the run does not hold
	// are leased (Linux): a switch inside the harness that runs no hook
	// (gemini's in-app /resume) is claimed at its first open for writing,
	// and a refused claim ends the harness before it writes.
	Lease []Watch
	// Err says why the adapter cannot read what the harness will read (a
	// settings file another user could have planted): the run is refused.
	Err error
	// CompanionEnv is what the companion is given to do in the harness's
	// place, once padrun holds the session (pi 1.x's -r --name): variables
	// for the child, set only when the companion loads.
	CompanionEnv []string
	// Version is the harness's release, read from its package; empty when
	// padrun cannot tell (the adapter then applies the newest rules).
	Version string
	// InUseClaims is the folder whose session folders get the harness's own
	// in-use lock when it opens one (copilot's session-state): a lock the
	// child's tree writes there is a claim of that session, made before the
	// harness appends (docs/spec.md §4.6). Unknown then says only what holds
	// where padrun cannot watch for those locks.
	InUseClaims string
	// Picker is the harness's start-up picker, when it opens one whose
	// pick it writes to before its companion can be asked; nil otherwise.
	Picker *Picker
	// StartLocks is the folder where the harness keeps a lock while its
	// start holds its companion back (opencode's install of its plugin
	// package, which every plugin's load awaits): the companion's
	// greeting clock waits while the child's tree holds one there.
	StartLocks string
}

// Picker is what padrun holds while a harness's start-up picker is open
// (docs/spec.md §4.2): every session it lists that is free, released but
// the one picked once the companion claims it; a session held elsewhere
// is refused when the harness loads it, which it does after it opens
// Signal (a folder it reads when a pick is made) and before it writes.
type Picker struct {
	Files  []string
	Signal string
}

// Watch is a folder where new session files appear: files matching
// Pattern, at Depth folders below Dir (codex keeps YYYY/MM/DD).
type Watch struct {
	Dir     string
	Depth   int
	Pattern string
	// Record, when set, names the harness's own record of each session's
	// writer, beside its session file: Pattern's "*" stands for the same
	// stem in both (cline: "*.json" beside "*.messages.json"). It is JSON
	// with the writer's "pid". A harness that writes a session file whole
	// and closes it at once leaves no open file to see its writer by; its
	// record still names it.
	Record string
}

// RecordOf is the name of the record of the session file named name, or
// "" when the watch keeps none or name is no session file of it.
func (w Watch) RecordOf(name string) string {
	stem, ok := cutStar(w.Pattern, name)
	if w.Record == "" || !ok {
		return ""
	}
	return strings.Replace(w.Record, "*", stem, 1)
}

// SessionOf is the name of the session file whose record is named name,
// or "" when name is no record of the watch's (a session file's name is
// none, though "*.json" matches it too).
func (w Watch) SessionOf(name string) string {
	if _, isSession := cutStar(w.Pattern, name); isSession || w.Record == "" {
		return ""
	}
	stem, ok := cutStar(w.Record, name)
	if !ok {
		return ""
	}
	return strings.Replace(w.Pattern, "*", stem, 1)
}

// cutStar is the part of name that the "*" of pattern (one "*" and no
// other wildcard) stands for, and whether name matches it.
func cutStar(pattern, name string) (string, bool) {
	prefix, suffix, ok := strings.Cut(pattern, "*")
	if !ok || len(name) <= len(prefix)+len(suffix) || !strings.HasPrefix(name, prefix) || !strings.HasSuffix(name, suffix) {
		return "", false
	}
	return name[len(prefix) : len(name)-len(suffix)], true
}

// Env is what an adapter may read of the child's environment.
type Env struct {
	Getenv func(string) string
	Cwd    string // canonical
	Home   string
	NoPin  bool
	// NoCompanion: the harness runs without its companion, so nothing of
	// argv may be left for the companion to do.
	NoCompanion bool
	StdinTTY    bool
	Now         time.Time
	// Version is the harness's release when the caller knows it; else
	// Resolve reads it from the package of the command found in PATH.
	Version string
}

// Modes a plan records (Plan.Mode); empty when the run opens no session.
const (
	ModePrint       = "print"
	ModeJSON        = "json"
	ModeRPC         = "rpc"
	ModeInteractive = "interactive"
)

// None is the harness of a command padrun knows nothing of: it guards only
// what --guard names.
const None = "none"

// Adapter is one harness: everything padrun knows of it. The package doc
// lists what a new one provides.
type Adapter struct {
	Name  string
	Agent string // the agent name recorded when none is given
	// read reads argv and the environment as the harness does.
	read     func(argv []string, env Env) Plan
	Sessions Sessions
	Env      []EnvVar // the variables read reads, for padrun's help
	// Packages are the npm packages the harness ships in, read for its
	// version; Oldest and Newest are the releases it is tested against
	// (test.sh's oldest and newest columns).
	Packages       []string
	Oldest, Newest string
	// HiddenMarkers are the patterns of session file names whose markers
	// are hidden (.<file>.padrun.json, as marker.Path names them:
	// marker's TestHiddenMarkers_AreTheAdapters keeps them equal); nil: they are
	// <file>.live.json. The rule is the file's, not the run's: a --guard
	// of the same file names its marker the same way.
	HiddenMarkers []string
	// Unvetoed says which switch inside the harness opens another session
	// with nothing padrun can refuse it from (no companion, no hook), and
	// what guards it then: the warning an interactive run gives once.
	Unvetoed  string
	Companion *CompanionSpec // nil: the harness has none
	// Held is the refusal's hint for a held file (shell-quoted) of this
	// harness: what reads it without writing it; nil when nothing does.
	Held func(quotedFile string) string
	// InUse lists the in-use locks the harness keeps beside a session file
	// of its own to say which of its processes has it open; nil for any
	// other file. A live one that padrun's run did not start is a foreign
	// holder; the ones its own run left are removed once their writer is
	// dead. Like HiddenMarkers, the rule is the file's.
	InUse func(file string) (locks []InUseLock, ok bool)
	// Records lists the records the harness leaves of a live session of
	// file (claude's sessions/<pid>.json), which padrun judges for a writer
	// it did not start (docs/spec.md §5 rule 9); nil when it leaves none.
	Records func(file string) []LiveRecord
	// ErasesArgv: the harness overwrites its command line with its title
	// (pi's process.title), so a live one's session cannot be read from
	// it: padrun can tell only the folder it works in.
	ErasesArgv bool
	// header reads the session id from the head of a session file of the
	// harness's, a decoder of its first MiB (HeaderID); ok is false when
	// it does not open with the harness's header. nil: its files name no
	// id in a header.
	header func(head *json.Decoder) (id string, ok bool)
	// release is the release the harness's launcher will really run, read
	// from where it looks (installed is the package's release; argv and env
	// the run's); nil: the package's.
	release func(installed string, argv []string, env Env) string
}

// InUseLock is an in-use lock a harness keeps beside a session file: the
// pid of the process that wrote it, and when it was written.
type InUseLock struct {
	Harness string
	Pid     int
	Path    string    // the lock file
	Also    []string  // files that go with it and are removed with it
	Written time.Time // the lock file's mtime: its writer started before it
}

// InUseLocks lists the in-use locks beside file of the harness that keeps
// them; ok says whether file is the session file of one that does.
func InUseLocks(file string) (locks []InUseLock, ok bool) {
	for _, a := range adapters {
		if a.InUse == nil {
			continue
		}
		if locks, ok := a.InUse(file); ok {
			for i := range locks {
				locks[i].Harness = a.Name
			}
			return locks, true
		}
	}
	return nil, false
}

// EnvVar is a variable an adapter reads, and what it means.
type EnvVar struct{ Name, Desc string }

// Sessions is where a harness keeps its session files and how it ranks
// them.
type Sessions struct {
	Folder  string // for people: the folder, and what moves it
	Pattern string // a session file's name, as read's Watch matches it
	Depth   int    // folders below the session folder (codex keeps YYYY/MM/DD)
	Ranking string // how the harness picks its latest session
	// Database: the sessions are rows of one database (docs/spec.md §4.7), held by
	// guards that Pattern names; no folder shows a new one, which the
	// companion claims.
	Database bool
}

// Lookup returns the adapter named name, None's included.
func Lookup(name string) (Adapter, bool) {
	for _, a := range adapters {
		if a.Name == name {
			return a, true
		}
	}
	return Adapter{}, false
}

// Names lists the harnesses padrun knows, in their declared order, None
// not among them.
func Names() []string {
	var out []string
	for _, a := range adapters {
		if a.Name != None {
			out = append(out, a.Name)
		}
	}
	return out
}

// Companions lists the harnesses that have a companion, in declared order.
func Companions() []string {
	var out []string
	for _, a := range adapters {
		if a.Companion != nil {
			out = append(out, a.Name)
		}
	}
	return out
}

// Agent is the agent name recorded for a run of the harness name when none
// is given; empty for None and unknown names.
func Agent(name string) string {
	a, _ := Lookup(name)
	return a.Agent
}

// List names harnesses for people: "pi, claude or codex" with and "or".
func List(names []string, and string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " " + and + " " + names[len(names)-1]
}

// Resolve picks the adapter named by name, or by the command's base name
// when name is empty, and lets it read argv.
func Resolve(name string, argv []string, env Env) (Plan, error) {
	if name == "" {
		name = filepath.Base(argv[0])
		if _, ok := Lookup(name); !ok {
			name = None
		}
	}
	ad, ok := Lookup(name)
	if !ok {
		return Plan{}, fmt.Errorf("harness: unknown harness %q (want %s)", name, List(append(Names(), None), "or"))
	}
	if env.Getenv == nil {
		env.Getenv = func(string) string { return "" }
	}
	if env.Now.IsZero() {
		env.Now = time.Now()
	}
	launcher, args := []string(nil), argv
	if name != None {
		var err error
		if launcher, args, err = SplitLauncher(name, argv); err != nil {
			return Plan{}, err
		}
	}
	if env.Version == "" {
		cmd := args[0]
		if launcher != nil {
			cmd = abs(cmd, env) // a script, never looked up in PATH
		}
		env.Version = installedVersion(cmd, env, ad.Packages)
		if ad.release != nil && env.Version != "" {
			env.Version = ad.release(env.Version, args, env)
		}
	}
	p := ad.read(slices.Clone(args), env)
	if p.Err != nil {
		return Plan{}, p.Err
	}
	p.Harness, p.Version, p.Argv = name, env.Version, slices.Concat(launcher, p.Argv)
	return p, nil
}

// abs makes p absolute against cwd, expanding a leading ~.
func abs(p string, env Env) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		p = filepath.Join(env.Home, p[1:])
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(env.Cwd, p)
	}
	return filepath.Clean(p)
}

// newest returns the newest file, by mtime, in dirs whose name matches
// pattern and that ok accepts.
func newest(dirs []string, pattern string, ok func(path string) bool) string {
	best, bestTime := "", time.Time{}
	for _, dir := range dirs {
		des, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, de := range des {
			if m, _ := filepath.Match(pattern, de.Name()); !m || !de.Type().IsRegular() {
				continue
			}
			p := filepath.Join(dir, de.Name())
			fi, err := de.Info()
			if err != nil || (ok != nil && !ok(p)) {
				continue
			}
			if best == "" || fi.ModTime().After(bestTime) {
				best, bestTime = p, fi.ModTime()
			}
		}
	}
	return best
}

// firstLine decodes a session file's first JSON line, reading at most
// 1 MiB: codex's first line carries its whole system prompt.
func firstLine(path string, v any) bool {
	f, err := openSession(path)
	if err != nil {
		return false
	}
	defer f.Close()
	return json.NewDecoder(io.LimitReader(f, 1<<20)).Decode(v) == nil
}

// HeaderID is the session id in a session file's header, once the harness
// has written it: its first lines, as the first adapter whose header reader
// knows their form reads them (pi's "session" line, omp's after its title
// line, codex's "session_meta" line, gemini's sessionId beside
// projectHash).
func HeaderID(path string) string {
	f, err := openSession(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	for _, a := range adapters {
		if a.header == nil {
			continue
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return ""
		}
		if id, ok := a.header(json.NewDecoder(sessionHead(f))); ok {
			return id
		}
	}
	return ""
}

// sessionHead is what a header reader reads of a session file: at most
// 1 MiB, as codex's first line carries its whole system prompt.
func sessionHead(f io.Reader) io.Reader { return io.LimitReader(f, 1<<20) }
