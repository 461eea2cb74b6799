// Package harness reads a harness's command line: which session files it is
// about to write, its session id, its mode, and the argv to run.
//
// Each adapter mirrors its harness's own argument parser closely enough to
// find the flags that choose a session file, and leaves every other argument
// alone. What was checked against the real CLIs is in SPEC section 4.
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
}

// Watch is a folder where new session files appear: files matching
// Pattern, at Depth folders below Dir (codex keeps YYYY/MM/DD).
type Watch struct {
	Dir     string
	Depth   int
	Pattern string
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

// Agents maps a harness to the agent name recorded when none is given.
var Agents = map[string]string{"pi": "pi", "claude": "claude-code", "codex": "codex"}

// adapter is one harness: how it reads argv, the npm packages it ships in,
// and the releases it is tested against (test.sh's oldest and newest
// columns; TestVersions_MatchTestSh keeps them equal).
type adapter struct {
	read           func(argv []string, env Env) Plan
	packages       []string
	oldest, newest string
}

var adapters = map[string]adapter{
	"pi": {read: pi, packages: []string{"@earendil-works/pi-coding-agent", "@mariozechner/pi-coding-agent"},
		oldest: "0.74.2", newest: "1.6.0"},
	"claude": {read: claude, packages: []string{"@anthropic-ai/claude-code"}, oldest: "2.1.197", newest: "2.1.332"},
	"codex":  {read: codex, packages: []string{"@openai/codex"}, oldest: "0.171.0", newest: "0.171.0"},
	"none":   {read: func(argv []string, _ Env) Plan { return Plan{Harness: "none", Argv: argv} }},
}

// Resolve picks the adapter named by name, or by the command's base name
// when name is empty, and lets it read argv.
func Resolve(name string, argv []string, env Env) (Plan, error) {
	if name == "" {
		name = filepath.Base(argv[0])
		if _, ok := Agents[name]; !ok {
			name = "none"
		}
	}
	ad, ok := adapters[name]
	if !ok {
		return Plan{}, fmt.Errorf("harness: unknown harness %q (want pi, claude, codex or none)", name)
	}
	if env.Getenv == nil {
		env.Getenv = func(string) string { return "" }
	}
	if env.Now.IsZero() {
		env.Now = time.Now()
	}
	if env.Version == "" {
		env.Version = installedVersion(argv[0], env, ad.packages)
	}
	p := ad.read(slices.Clone(argv), env)
	if p.Err != nil {
		return Plan{}, p.Err
	}
	p.Harness, p.Version = name, env.Version
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
// has written it: pi's "session" line, codex's "session_meta" line.
func HeaderID(path string) string {
	var h struct {
		Type    string `json:"type"`
		ID      string `json:"id"`
		Payload struct {
			ID string `json:"id"`
		} `json:"payload"`
	}
	if !firstLine(path, &h) {
		return ""
	}
	switch h.Type {
	case "session":
		return h.ID
	case "session_meta":
		return h.Payload.ID
	}
	return ""
}
