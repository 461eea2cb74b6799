package wrapper

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/padrun/padrun/marker/safefile"
	"github.com/padrun/padrun/wrapper/harness"
)

// warnedFile is where padrun remembers the untested harness releases it
// has warned about, one "HARNESS VERSION" a line, in its 0700 state folder:
// people who see a warning on every run stop reading it.
const warnedFile = "warned-versions"

// stateDir is padrun's own state folder: stateHome/padrun
// ($XDG_STATE_HOME), else ~/.local/state/padrun.
func stateDir(stateHome string) string {
	if filepath.IsAbs(stateHome) {
		return filepath.Join(stateHome, "padrun")
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return ""
	}
	return filepath.Join(home, ".local", "state", "padrun")
}

// warnUntested warns, once per release, when the harness's release is
// outside the tested ones, and returns the warning ("" when none was
// given). When padrun cannot remember (its state folder cannot be written),
// it warns every time: never silently.
func warnUntested(o Options, plan harness.Plan) string {
	msg := harness.Untested(plan)
	if msg == "" || !firstWarning(stateDir(o.Env.StateHome), plan.Harness+" "+plan.Version) {
		return ""
	}
	o.Log.Warn().Msg(msg)
	return msg
}

// firstWarning reports whether key is not yet in dir's warned file, and
// adds it. Best effort: any failure to read or write counts as not warned.
func firstWarning(dir, key string) bool {
	if dir == "" {
		return true
	}
	path := filepath.Join(dir, warnedFile)
	b, _, err := safefile.ReadBounded(path, 64<<10)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return true
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if slices.Contains(lines, key) {
		return false
	}
	if !ownDir(dir) {
		return true
	}
	if len(b) > 32<<10 {
		lines = nil // a long list: start again rather than grow
	}
	lines = append(slices.DeleteFunc(lines, func(s string) bool { return s == "" }), key)
	tmp := path + "." + strconv.Itoa(os.Getpid()) + ".tmp"
	os.Remove(tmp) // Best effort: a leftover of a killed run of this pid.
	if safefile.WriteNew(tmp, []byte(strings.Join(lines, "\n")+"\n")) == nil {
		if os.Rename(tmp, path) != nil {
			os.Remove(tmp) // Best effort.
		}
	}
	return true
}

// ownDir makes dir, 0700, when it is missing, and reports whether it is a
// folder (not a symlink) that only its owner can write into.
func ownDir(dir string) bool {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false
	}
	fi, err := os.Lstat(dir)
	return err == nil && fi.IsDir() && fi.Mode().Perm()&0o022 == 0
}
