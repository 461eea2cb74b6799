package wrapper

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/padrun/padrun/marker/ident"
	"github.com/padrun/padrun/wrapper/harness"
)

// The folder of harness entries (docs/spec.md §7): a harness the agent
// starts from inside the session (its bash tool's `pi -c`) finds padrun
// first in PATH, runs under it, and is refused when it names a held
// session. Each entry is a symlink named after a harness's command to
// padrun's own executable: padrun started under that name runs as
// `padrun -- NAME ARGS...`, and finds the real command further down PATH
// (supervise.LookPathNotSelf). A harness started by an absolute path
// passes it by.

// shimPrefix opens the name of a run's folder of harness entries in the
// control folder: shimPrefix<pid>-<start token>-<place>-<random>, so that
// one a killed padrun left is proven left (ident.TaggedDead).
const shimPrefix = "harnesses-"

// IsHarnessCommand tells whether name, a command's base name, is one that
// the folder of harness entries holds: padrun started under it runs as
// `padrun -- name ARGS...`.
func IsHarnessCommand(name string) bool {
	return name != harness.None && slices.Contains(harness.Names(), name)
}

// nestedGuard puts the run's folder of harness entries first in the
// child's PATH, unless --no-nested-guard is set or the run guards nothing
// and may claim nothing (it then costs nothing), and returns what removes
// it. A folder that cannot be made is said: the run goes on, and harnesses
// started inside it are unguarded.
func (s *session) nestedGuard(r *run) (remove func()) {
	if !shimsHere || s.o.NoNestedGuard || (len(r.files) == 0 && r.plan.Harness == harness.None) {
		return func() {}
	}
	dir, err := makeShims(s.o.Env.RuntimeDir)
	if err != nil {
		s.o.Log.Warn().Err(err).Msg("harnesses started inside the session are unguarded")
		return func() {}
	}
	r.env = prependPath(r.env, dir)
	return func() { removeShims(dir) } // Best effort: one left is removed by a later run once this one is proven dead.
}

// removeShims removes the run's folder of harness entries: each entry by
// its name, then the folder; what else is in it, after (os.RemoveAll alone
// tries each name as a folder first, three system calls more).
func removeShims(dir string) {
	for _, name := range harness.Names() {
		os.Remove(filepath.Join(dir, name)) // Best effort: the folder's removal says.
	}
	if syscall.Rmdir(dir) != nil {
		os.RemoveAll(dir) // Best effort.
	}
}

// makeShims makes a folder of harness entries in the control folder, 0700,
// one symlink to padrun's executable for each harness command, and first
// removes those that dead padruns left.
func makeShims(runtimeDir string) (string, error) {
	base, err := controlDir(runtimeDir)
	if err != nil {
		return "", err
	}
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	pruneShims(base)
	dir := filepath.Join(base, ident.TaggedName(shimPrefix, ""))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", err
	}
	if fi, err := os.Lstat(dir); err != nil || fi.Mode().Perm() != 0o700 { // a umask that took the owner's bits
		if err := os.Chmod(dir, 0o700); err != nil {
			os.Remove(dir) // Best effort.
			return "", err
		}
	}
	for _, name := range harness.Names() {
		if err := os.Symlink(exe, filepath.Join(dir, name)); err != nil {
			removeShims(dir)
			return "", err
		}
	}
	return dir, nil
}

// pruneShims removes the folders of harness entries in base whose padrun
// is proven dead, and returns how many went; never one whose padrun lives
// or cannot be judged from here.
func pruneShims(base string) int {
	entries, err := os.ReadDir(base)
	if err != nil {
		return 0 // Best effort.
	}
	n := 0
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || !strings.HasPrefix(name, shimPrefix) || !ident.TaggedDead(shimPrefix, "", name) {
			continue
		}
		if os.RemoveAll(filepath.Join(base, name)) == nil {
			n++
		}
	}
	return n
}

// PruneShims removes the folders of harness entries that padruns killed by
// SIGKILL left, as a run does before it makes its own, and returns how
// many went.
func PruneShims(env Env) int {
	if !shimsHere {
		return 0
	}
	base, err := controlDir(env.RuntimeDir)
	if err != nil {
		return 0
	}
	return pruneShims(base)
}

// prependPath is env with dir first in PATH; with no PATH, dir then
// execvp's default search path.
func prependPath(env []string, dir string) []string {
	out := slices.Clone(env)
	for i, kv := range out {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			out[i] = "PATH=" + dir + string(filepath.ListSeparator) + v
			return out
		}
	}
	return append(out, "PATH="+dir+string(filepath.ListSeparator)+"/bin:/usr/bin")
}
