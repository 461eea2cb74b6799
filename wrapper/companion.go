package wrapper

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/padrun/padrun/marker/safefile"
	"github.com/padrun/padrun/wrapper/harness"
)

// writeCompanion puts a companion into dir, the user's own 0700 folder,
// named by padrun's version and its content (name-VERSION-HASH.ext), and
// returns its path. An
// identical file there is reused; anything else under that name (another
// content, a symlink) is replaced by a rename, never written through.
func writeCompanion(dir, name, ext string, b []byte) (string, error) {
	path, _ := companionPath(dir, name, ext, b)
	if old, _, err := safefile.ReadBounded(path, 1<<20); err == nil && bytes.Equal(old, b) {
		return path, nil
	}
	tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
	os.Remove(tmp) // Best effort: a leftover of a killed padrun of the same pid.
	if err := safefile.WriteNew(tmp, b); err != nil {
		return "", fmt.Errorf("wrapper: write companion %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp) // Best effort.
		return "", fmt.Errorf("wrapper: write companion %s: %w", path, err)
	}
	return path, nil
}

// companionPath is where writeCompanion writes b: its name says padrun's
// version and the content's hash, so a file already there is the same.
func companionPath(dir, name, ext string, b []byte) (string, error) {
	sum := sha256.Sum256(b)
	return filepath.Join(dir, fmt.Sprintf("%s-%s-%s%s", name, Version, hex.EncodeToString(sum[:8]), ext)), nil
}

// setupCompanion readies the harness's companion for this run: its file,
// written where only the user can change it, and the argv that loads it.
// It returns the control folder, or "" when no companion runs.
func (s *session) setupCompanion(plan *harness.Plan) (string, error) {
	c := harness.CompanionOf(*plan)
	if c == nil {
		return "", nil
	}
	name := plan.Harness
	if s.o.NoCompanion {
		s.o.Log.Warn().Str("harness", name).Msg("--no-companion: session switches inside " + name + " are unguarded; only the session it starts with is")
		return "", nil
	}
	dir, why, err := s.loadCompanion(c, plan, writeCompanion)
	switch {
	case err != nil:
		return "", &UsageError{Err: fmt.Errorf("cannot set up the %s companion: %w", name, err),
			Advice: "fix the folder, or run with --no-companion to leave switches inside " + name + " unguarded"}
	case why != "" && slices.Contains(c.QuietIn, plan.Mode):
		s.o.Log.Debug().Msg(why) // it would guard no switch there
	case why != "":
		s.o.Log.Warn().Msg(why)
	}
	return dir, nil
}

// loadCompanion readies companion c for plan, writing its files with
// write, and returns the control folder; why, when the companion cannot
// load, says so, and the folder is then "".
func (s *session) loadCompanion(c *harness.CompanionSpec, plan *harness.Plan, write func(dir, name, ext string, b []byte) (string, error)) (dir, why string, err error) {
	name := plan.Harness
	unguarded := c.Conflict + ", so session switches inside " + name + " are unguarded"
	if c.Occupied(s.o.Env.Getenv) {
		return "", unguarded, nil
	}
	dir, err = controlDir(s.o.Env.RuntimeDir)
	load := harness.Load{Version: plan.Version, Getenv: s.o.Env.Getenv}
	if err == nil && c.Script != nil {
		load.Script, err = write(dir, c.ScriptName, ".js", c.Script())
	}
	if err == nil && c.Hook != "" {
		var self string
		if self, err = selfPath(); err == nil {
			load.Hook = harness.ShellQuote(self) + " " + c.Hook
		}
	}
	if env, b := c.Settings(load.Hook); err == nil && b != nil {
		var path string
		if path, err = write(dir, name+"-settings", ".json", b); err == nil && env != "" {
			plan.CompanionEnv = append(plan.CompanionEnv, env+"="+path)
		}
		load.Settings = path
	}
	if err != nil {
		return "", "", err
	}
	argv, ok := c.Argv(plan.Argv, load)
	env, envOK := c.Env(load)
	if !ok || !envOK {
		return "", unguarded, nil
	}
	plan.Argv = argv
	plan.CompanionEnv = append(plan.CompanionEnv, env...)
	return dir, "", nil
}

// selfPath is how the harness runs padrun again: argv[0] as padrun was
// started, made absolute (through PATH when it has no slash).
func selfPath() (string, error) {
	p := os.Args[0]
	if !strings.Contains(p, "/") {
		found, err := exec.LookPath(p)
		if err != nil {
			return os.Executable()
		}
		p = found
	}
	return filepath.Abs(p)
}
