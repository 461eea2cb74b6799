package wrapper

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/padrun/padrun/wrapper/harness"
)

// parentSession returns the session pid of an outer session, from
// PAD_SESSION_PID, or 0 when there is none.
func parentSession() (int, error) {
	v, ok := os.LookupEnv("PAD_SESSION_PID")
	if !ok {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return 0, &UsageError{fmt.Sprintf("PAD_SESSION_PID=%q is not a positive integer", v)}
	}
	return n, nil
}

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

// CanonicalFile resolves the folder of p; the file itself need not exist.
func CanonicalFile(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	if strings.HasSuffix(p, string(filepath.Separator)) {
		return "", fmt.Errorf("%s names a folder, not a session file", p)
	}
	dir, err := CanonicalDir(filepath.Dir(abs))
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, filepath.Base(abs)), nil
}

// CanonicalDir resolves the symlinks of dir's longest existing prefix.
func CanonicalDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	var rest []string
	for {
		r, err := filepath.EvalSymlinks(abs)
		if err == nil {
			return filepath.Join(append([]string{r}, rest...)...), nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(abs)
		if parent == abs {
			return "", err
		}
		rest = append([]string{filepath.Base(abs)}, rest...)
		abs = parent
	}
}

// resolveAgent: --agent, else agent_name in the nearest .pad.toml from cwd
// up, else $PAD_AGENT, else the harness's name, else empty.
func resolveAgent(flag, cwd, harnessName string) string {
	if flag != "" {
		return flag
	}
	for dir := cwd; ; dir = filepath.Dir(dir) {
		if name, ok := padTOMLAgent(filepath.Join(dir, ".pad.toml")); ok {
			return name
		}
		if filepath.Dir(dir) == dir {
			break
		}
	}
	if a := os.Getenv("PAD_AGENT"); a != "" {
		return a
	}
	return harness.Agents[harnessName]
}

// padTOMLAgent reads the top-level agent_name of a .pad.toml. ok is false
// when the file is missing or has no agent_name.
func padTOMLAgent(path string) (string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
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
