package wrapper

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/rs/zerolog"

	"github.com/padrun/padrun/marker/ident"
	"github.com/padrun/padrun/registry"
	"github.com/padrun/padrun/supervise"
	"github.com/padrun/padrun/supervise/cgroup"
	"github.com/padrun/padrun/wrapper/harness"
)

// Checkup is what padrun guards on this machine, as padrun doctor shows it:
// each check says whether it is as padrun needs it, and what it found.
type Checkup struct {
	Registry  Check           `json:"registry"`
	Cgroups   Check           `json:"cgroups"`
	Harnesses []HarnessReport `json:"harnesses"`
}

// Check is one finding: OK, and what was found (or why it is not OK).
type Check struct {
	OK   bool   `json:"ok"`
	What string `json:"what"`
}

// HarnessReport is what doctor finds of one harness padrun knows.
type HarnessReport struct {
	Name    string `json:"name"`
	Path    string `json:"path,omitempty"` // "" when it is not on PATH
	Version string `json:"version,omitempty"`
	// Release says how the release compares with the tested ones.
	Release   Check  `json:"release"`
	Companion *Check `json:"companion,omitempty"` // nil: the harness has none
	Modes     []Mode `json:"modes"`
}

// Mode is how one mode of a harness is guarded (docs/harnesses.md).
type Mode struct {
	Mode    string `json:"mode"`
	Guarded bool   `json:"guarded"`
	By      string `json:"test,omitempty"`
	Why     string `json:"why,omitempty"`
}

// Found reports whether the harness is on PATH.
func (h HarnessReport) Found() bool { return h.Path != "" }

// Guarded reports whether everything found of the harness is guarded: a
// tested release, a companion that loads, every mode guarded.
func (h HarnessReport) Guarded() bool {
	if !h.Found() {
		return true
	}
	ok := h.Release.OK && (h.Companion == nil || h.Companion.OK)
	for _, m := range h.Modes {
		ok = ok && m.Guarded
	}
	return ok
}

// Guarded reports whether everything the checkup found is guarded.
func (c Checkup) Guarded() bool {
	ok := c.Registry.OK
	for _, h := range c.Harnesses {
		ok = ok && h.Guarded()
	}
	return ok
}

// Doctor looks at what padrun guards here, changing nothing but the
// control folder a run would make: the registry folder, cgroup
// delegation, and each harness on PATH (env's) with its release and
// whether its companion loads, checked as a run checks it.
func Doctor(env Env, cwd string) Checkup {
	c := Checkup{Registry: registryCheck(), Cgroups: cgroupCheck()}
	home, _ := os.UserHomeDir() // Best effort: adapters fall back to none.
	for _, name := range harness.Names() {
		c.Harnesses = append(c.Harnesses, harnessCheck(name, env, cwd, home))
	}
	return c
}

func registryCheck() Check {
	dir, err := registry.Dir()
	if err != nil {
		return Check{What: err.Error()}
	}
	var fi fs.FileInfo
	if fi, err = os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return Check{OK: true, What: dir + ": not there yet (the first run makes it, 0700)"}
	}
	if err != nil {
		return Check{What: err.Error()}
	}
	what := fmt.Sprintf("%s: mode %04o", dir, fi.Mode().Perm())
	uid, owned := owner(fi)
	switch {
	case !fi.IsDir():
		return Check{What: dir + ": not a folder (a symlink?): padrun refuses to run"}
	case owned && uid != os.Getuid():
		return Check{What: fmt.Sprintf("%s, owned by uid %d: padrun refuses to use it", what, uid)}
	case fi.Mode().Perm()&0o022 != 0:
		return Check{What: what + ": others may write it, padrun refuses to use it"}
	}
	return Check{OK: true, What: what + ", yours"}
}

func cgroupCheck() Check {
	cg := cgroup.New(cgroup.Tag(ident.ReadSelf()))
	if cg == nil {
		return Check{What: "no cgroup v2 padrun may write: a session's processes are followed by the inherited lock and padrun's subreaper alone"}
	}
	return Check{OK: true, What: "each session gets a cgroup of its own below " + filepath.Dir(cg.Path)}
}

// harnessCheck finds the harness name on PATH and reads it as a run
// would: its release, its companion, its modes.
func harnessCheck(name string, env Env, cwd, home string) HarnessReport {
	h := HarnessReport{Name: name}
	for _, g := range harness.Modes(name) {
		h.Modes = append(h.Modes, Mode{Mode: g.Mode, Guarded: g.Guarded(), By: g.By, Why: g.Why})
	}
	path, err := supervise.LookPath(name, env.Path)
	if err != nil {
		return h
	}
	h.Path = path
	plan, err := harness.Resolve(name, []string{path}, harness.Env{Getenv: env.Getenv, Cwd: cwd, Home: home, StdinTTY: true})
	if err != nil {
		h.Release = Check{What: err.Error()}
		return h
	}
	h.Version = plan.Version
	switch msg := harness.Untested(plan); {
	case plan.Version == "":
		h.Release = Check{What: "its release cannot be read from its package: padrun applies the newest rules"}
	case msg != "":
		h.Release = Check{What: msg}
	default:
		h.Release = Check{OK: true, What: "a tested release"}
	}
	if c := harness.CompanionOf(plan); c != nil {
		s := &session{o: Options{Env: env, Log: zerolog.Nop()}}
		_, why, err := s.loadCompanion(c, &plan, companionPath)
		switch {
		case err != nil:
			h.Companion = &Check{What: "cannot be set up: " + err.Error()}
		case why != "":
			h.Companion = &Check{What: why}
		default:
			h.Companion = &Check{OK: true, What: "loads (" + c.LoadedBy + ")"}
		}
	}
	return h
}
