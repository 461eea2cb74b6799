package harness

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/padrun/padrun/marker/safefile"
	"github.com/padrun/padrun/supervise"
)

// Tested is a harness and the releases padrun is tested against: the
// oldest it supports and the newest (test.sh installs both).
type Tested struct {
	Harness, Oldest, Newest string
}

// TestedVersions lists every harness's tested releases, by harness name.
func TestedVersions() []Tested {
	var out []Tested
	for _, a := range adapters {
		if a.Newest != "" {
			out = append(out, Tested{Harness: a.Name, Oldest: a.Oldest, Newest: a.Newest})
		}
	}
	slices.SortFunc(out, func(a, b Tested) int { return strings.Compare(a.Harness, b.Harness) })
	return out
}

// Untested says, in one line, that the plan's harness release is outside
// the tested ones: newer than the newest tested major.minor, or older than
// the oldest. Empty when it is tested, or when its version is unknown.
func Untested(p Plan) string {
	a, ok := Lookup(p.Harness)
	if !ok || a.Newest == "" || p.Version == "" {
		return ""
	}
	v, ok := parseVersion(p.Version)
	if !ok {
		return ""
	}
	newest, _ := parseVersion(a.Newest)
	oldest, _ := parseVersion(a.Oldest)
	switch {
	case compareMinor(v, newest) > 0:
		return fmt.Sprintf("%s %s is newer than %s %s, the newest release padrun is tested with: padrun reads its command line by %s's rules", p.Harness, p.Version, p.Harness, a.Newest, a.Newest)
	case compare(v, oldest) < 0:
		return fmt.Sprintf("%s %s is older than %s %s, the oldest release padrun is tested with: padrun reads its command line by %s's rules", p.Harness, p.Version, p.Harness, a.Oldest, a.Oldest)
	}
	return ""
}

// version is a release number: major, minor, patch.
type version [3]int

// parseVersion reads "1.6.0" (a pre-release or build suffix is ignored).
func parseVersion(s string) (version, bool) {
	s, _, _ = strings.Cut(s, "-")
	s, _, _ = strings.Cut(s, "+")
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return version{}, false
	}
	var v version
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || p == "" {
			return version{}, false
		}
		v[i] = n
	}
	return v, true
}

func compare(a, b version) int { return slices.Compare(a[:], b[:]) }

// compareMinor compares major.minor only: a patch release of the newest
// tested minor is no surprise.
func compareMinor(a, b version) int { return slices.Compare(a[:2], b[:2]) }

// atLeast reports whether the release s is at least major.minor; an
// unknown release counts as the newest.
func atLeast(s string, major, minor int) bool {
	v, ok := parseVersion(s)
	return !ok || compareMinor(v, version{major, minor}) >= 0
}

// installedVersion reads the release of the harness that argv0 runs
// without running it: the command found in PATH as padrun will start it,
// its symlinks resolved (npm links bin/ into the package), then the first
// package.json above it, at most four folders up and not past a
// node_modules folder, that names one of packages. Empty when there is none.
// package.json is opened as a hostile file: no symlink, no FIFO, bounded.
func installedVersion(argv0 string, env Env, packages []string) string {
	if len(packages) == 0 {
		return ""
	}
	path, err := supervise.LookPathNotSelf(argv0, env.Getenv("PATH"))
	if err != nil {
		return ""
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(env.Cwd, path)
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return ""
	}
	dir := filepath.Dir(real)
	for range 4 {
		if filepath.Base(dir) == "node_modules" {
			break
		}
		if b, _, err := safefile.ReadBounded(filepath.Join(dir, "package.json"), 64<<10); err == nil {
			var pkg struct {
				Name    string `json:"name"`
				Version string `json:"version"`
			}
			if json.Unmarshal(b, &pkg) == nil && slices.Contains(packages, pkg.Name) {
				if _, ok := parseVersion(pkg.Version); ok {
					return pkg.Version
				}
				return ""
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return ""
}
