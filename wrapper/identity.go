package wrapper

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/padrun/padrun/marker/safefile"
	"github.com/padrun/padrun/wrapper/harness"
)

// guardedFiles makes every path absolute with its parent folder canonical,
// and returns them sorted, without duplicates.
func guardedFiles(guards, found []string) ([]string, error) {
	var files []string
	for _, p := range append(slices.Clone(guards), found...) {
		if p == "" {
			return nil, errors.New("--guard needs a path")
		}
		c, err := CanonicalFile(p)
		if err != nil {
			return nil, err
		}
		files = append(files, c)
	}
	slices.Sort(files)
	return slices.Compact(files), nil
}

// CanonicalFile returns the name the kernel resolves p to (see Resolve);
// the file itself need not exist. A path ending in a separator names a
// folder and is refused.
func CanonicalFile(p string) (string, error) {
	if strings.HasSuffix(p, string(filepath.Separator)) || strings.HasSuffix(p, "/") {
		return "", fmt.Errorf("%s names a folder, not a session file", p)
	}
	return Resolve(p)
}

// canonicalDir returns the name the kernel resolves dir to (see Resolve).
func canonicalDir(dir string) (string, error) {
	return Resolve(dir)
}

// maxLinks bounds the symlinks followed in one path, as the kernel's ELOOP does.
const maxLinks = 40

// Resolve returns the one name of what p names, as the kernel resolves it
// when a process opens p: joined to the real working folder (getcwd(2),
// never $PWD), each component in turn, symlinks first and ".." after them,
// the last component too when it is a symlink. Unlike filepath.Abs it does
// not clean ".." by string editing, and unlike filepath.EvalSymlinks the
// path need not exist: from the first component that does not, the rest is
// kept as named (cleaned, as mkdir -p reads it).
func Resolve(p string) (string, error) {
	if p == "" {
		return "", errors.New("wrapper: resolve: empty path")
	}
	if !filepath.IsAbs(p) {
		wd, err := workingDir()
		if err != nil {
			return "", fmt.Errorf("wrapper: current folder: %w", err)
		}
		p = wd + string(filepath.Separator) + p
	}
	r, err := walk(p, nil)
	if err != nil {
		return "", fmt.Errorf("wrapper: resolve %s: %w", p, err)
	}
	return r, nil
}

// errLinkLoop is ELOOP's text: more than maxLinks symlinks in one path.
var errLinkLoop = errors.New("too many levels of symbolic links")

// walk resolves the absolute path p as Resolve describes, looking up one
// entry at a time; visit, when set, is told each folder and name looked up
// (the way to a symlink's target included), in the kernel's order. From the
// first name that does not exist the rest is kept as named.
func walk(p string, visit func(dir, name string)) (string, error) {
	vol := filepath.VolumeName(p)
	done := vol + string(filepath.Separator)
	todo := components(p[len(vol):])
	for links := 0; len(todo) > 0; {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case ".":
			continue
		case "..":
			done = filepath.Dir(done) // done has no symlink: its parent is real
			continue
		}
		if visit != nil {
			visit(done, c)
		}
		next := filepath.Join(done, c)
		fi, err := os.Lstat(next)
		switch {
		case errors.Is(err, os.ErrNotExist):
			return filepath.Join(append([]string{next}, todo...)...), nil
		case err != nil:
			return "", err
		case fi.Mode()&os.ModeSymlink == 0:
			done = next
			continue
		}
		if links++; links > maxLinks {
			return "", errLinkLoop
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			v := filepath.VolumeName(target)
			done, target = v+string(filepath.Separator), target[len(v):]
		}
		todo = append(components(target), todo...)
	}
	return done, nil
}

// components splits a path into its names, without empty ones.
func components(p string) []string {
	return strings.FieldsFunc(p, func(r rune) bool { return os.IsPathSeparator(uint8(r)) && r < 128 })
}

// workingDir is the real working folder, from getcwd(2): $PWD may name it
// through a symlink, and the kernel resolves ".." from the real one.
func workingDir() (string, error) {
	for {
		wd, err := syscall.Getwd()
		if err != syscall.EINTR {
			return wd, err
		}
	}
}

// resolveAgent: --agent, else agent_name in the nearest .pad.toml from cwd
// up, else envAgent ($PAD_AGENT), else the harness's name, else empty. A .pad.toml in a
// parent folder may be anyone's: one that is not a regular file of the
// user's or root's is an error, never a wait (docs/spec.md §14).
func resolveAgent(flag, cwd, envAgent, harnessName string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	for dir := cwd; ; dir = filepath.Dir(dir) {
		name, ok, err := padTOMLAgent(filepath.Join(dir, ".pad.toml"))
		if err != nil {
			return "", err
		}
		if ok {
			return name, nil
		}
		if filepath.Dir(dir) == dir {
			break
		}
	}
	if envAgent != "" {
		return envAgent, nil
	}
	return harness.Agent(harnessName), nil
}

// maxPadTOML bounds the read of a .pad.toml: pad's are a few lines.
const maxPadTOML = 64 << 10

// padTOMLAgent reads the top-level agent_name of a .pad.toml. ok is false
// when the file is missing or has no agent_name.
func padTOMLAgent(path string) (string, bool, error) {
	f, err := safefile.OpenTrusted(path, maxPadTOML)
	var hostile *safefile.HostileError
	switch {
	case errors.As(err, &hostile):
		return "", false, &UsageError{Err: err, Advice: "padrun reads a .pad.toml only when it is a regular file of yours or root's: remove " + path + ", or name the agent with --agent NAME"}
	case err != nil:
		return "", false, nil // missing or unreadable: no agent name here, as before
	}
	defer f.Close()
	name, ok := padTOMLName(f)
	return name, ok, nil
}

// padTOMLName scans a .pad.toml for its top-level agent_name.
func padTOMLName(r io.Reader) (string, bool) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			break // top-level keys come before the first table
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.TrimSpace(k) != "agent_name" {
			continue
		}
		v = strings.TrimSpace(v)
		if i := strings.Index(v, " #"); i >= 0 && (v[0] != '"' && v[0] != '\'') {
			v = strings.TrimSpace(v[:i])
		}
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') {
			if end := strings.IndexByte(v[1:], v[0]); end >= 0 {
				return v[1 : end+1], v[1:end+1] != ""
			}
		}
		return "", false
	}
	return "", false
}

// checkNames warns about every session file that has more than one name: a
// hard link is a second name that padrun cannot see, and a run through it
// would take a second hold. With strict it refuses instead.
func checkNames(files []string, strict bool, warn func(string)) error {
	for _, f := range files {
		fi, err := os.Lstat(f)
		if err != nil {
			continue // not there yet: one name
		}
		n := linkCount(fi)
		if n <= 1 {
			continue
		}
		if strict {
			return usagef("%s has %d names (hard links) and --strict is set: padrun cannot hold the other names", f, n)
		}
		warn(fmt.Sprintf("%s has %d names (hard links): padrun holds it by this name only, and by its inode while it exists; a run through another name is refused only then", f, n))
	}
	return nil
}
