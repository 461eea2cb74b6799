package wrapper

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

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
// one a killed padrun left is proven left (ident.TaggedDead). It is a
// symlink to the entries (entriesPrefix), which every run of one padrun
// executable shares: a run then makes one name and removes one, where a
// folder of its own took a mkdir, a symlink per harness and as many
// removals (on ext4 each create searches the inode table past the
// recently deleted inodes: recently_deleted in find_inode_bit).
const shimPrefix = "harnesses-"

// entriesPrefix opens the name of the shared folder of entries:
// entriesPrefix<hash of the executable's path and the harness commands>,
// so that another padrun, or this one after an upgrade that knows more
// harnesses, has its own. One that is being built, or moved aside to be
// removed, is named freshPrefix<pid>-<start token>-<place>-<random>, so
// that one a killed padrun left is proven left too.
const (
	entriesPrefix = "entries-"
	freshPrefix   = entriesPrefix + "new-"
)

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
	return func() { os.Remove(dir) } // Best effort: one left is removed by a later run once this one is proven dead.
}

// makeShims gives the run its folder of harness entries in the control
// folder: a name of its own, a symlink to the shared entries (0700, one
// symlink to padrun's executable for each harness command), which it
// makes first when they are missing or not whole. It first removes the
// names that dead padruns left.
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
	entries, err := sharedEntries(base, exe)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(base, ident.TaggedName(shimPrefix, ""))
	if err := os.Symlink(filepath.Base(entries), dir); err != nil {
		return "", err
	}
	return dir, nil
}

// sharedEntries is the folder of entries for exe in base, made when it is
// missing or not whole (a cleaner of old files took some): built under a
// name of its own, then renamed into place, so that no run sees it half
// made. One that is not whole is moved aside and removed first.
func sharedEntries(base, exe string) (string, error) {
	names := harness.Names()
	sum := sha256.Sum256([]byte(exe + "\x00" + strings.Join(names, "\x00")))
	dir := filepath.Join(base, entriesPrefix+hex.EncodeToString(sum[:8]))
	if entriesWhole(dir, exe, names) {
		return dir, nil
	}
	fresh, err := buildEntries(base, exe, names)
	if err != nil {
		return "", err
	}
	for range 2 {
		err = os.Rename(fresh, dir)
		if err == nil || entriesWhole(dir, exe, names) { // made whole by another run meanwhile
			if err != nil {
				os.RemoveAll(fresh) // Best effort: a dead run's is pruned.
			}
			return dir, nil
		}
		aside := filepath.Join(base, ident.TaggedName(freshPrefix, ""))
		if os.Rename(dir, aside) == nil {
			os.RemoveAll(aside) // Best effort: pruned once this run is proven dead.
		}
	}
	os.RemoveAll(fresh) // Best effort.
	return "", fmt.Errorf("wrapper: put the folder of harness entries in place at %s: %w", dir, err)
}

// entriesWhole tells whether dir is the user's own 0700 folder that holds
// an entry, a symlink to exe, for each of names, and nothing else.
func entriesWhole(dir, exe string, names []string) bool {
	if checkFolder(dir) != nil {
		return false
	}
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	got, err := f.Readdirnames(-1)
	if err != nil || len(got) != len(names) {
		return false
	}
	for _, name := range got {
		if !slices.Contains(names, name) {
			return false
		}
		if to, err := os.Readlink(filepath.Join(dir, name)); err != nil || to != exe {
			return false
		}
	}
	return true
}

// buildEntries makes a fresh folder of entries in base, under a name of
// its own, and returns it.
func buildEntries(base, exe string, names []string) (string, error) {
	dir := filepath.Join(base, ident.TaggedName(freshPrefix, ""))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", err
	}
	if fi, err := os.Lstat(dir); err != nil || fi.Mode().Perm() != 0o700 { // a umask that took the owner's bits
		if err := os.Chmod(dir, 0o700); err != nil {
			os.Remove(dir) // Best effort.
			return "", err
		}
	}
	for _, name := range names {
		if err := os.Symlink(exe, filepath.Join(dir, name)); err != nil {
			os.RemoveAll(dir) // Best effort.
			return "", err
		}
	}
	return dir, nil
}

// pruneShims removes the run names (and the folders of older padruns)
// whose padrun is proven dead, and half-built entries their padrun left,
// and returns how many went; never one whose padrun lives or cannot be
// judged from here.
func pruneShims(base string) int {
	entries, err := os.ReadDir(base)
	if err != nil {
		return 0 // Best effort.
	}
	n := 0
	for _, e := range entries {
		name := e.Name()
		if !ident.TaggedDead(shimPrefix, "", name) && !ident.TaggedDead(freshPrefix, "", name) {
			continue
		}
		if os.RemoveAll(filepath.Join(base, name)) == nil { // a symlink is removed, not followed
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
