// Package harness reads a harness's command line: which session files it is
// about to write, its session id, its mode, and the argv to run.
package harness

import (
	"fmt"
	"path/filepath"
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
}

// Env is what an adapter may read of the child's environment.
type Env struct {
	Getenv func(string) string
	Cwd    string // canonical
	Home   string
	NoPin  bool
}

// Names lists the harnesses padrun knows, for --harness.
var Names = []string{"pi", "claude", "codex", "none"}

// Agents maps a harness to the agent name recorded when none is given.
var Agents = map[string]string{"pi": "pi", "claude": "claude-code", "codex": "codex"}

// Resolve picks the adapter named by name, or by the command's base name
// when name is empty, and lets it read argv.
func Resolve(name string, argv []string, env Env) (Plan, error) {
	if name == "" {
		name = filepath.Base(argv[0])
		if _, ok := Agents[name]; !ok {
			name = "none"
		}
	}
	switch name {
	case "pi", "claude", "codex":
		return Plan{Harness: name, Argv: argv, Mode: "", Unknown: ""}, nil
	case "none":
		return Plan{Harness: "none", Argv: argv}, nil
	}
	return Plan{}, fmt.Errorf("harness: unknown harness %q (want pi, claude, codex or none)", name)
}
