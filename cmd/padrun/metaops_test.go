//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// metaOp is one metadata operation a run made: what, and on which of its
// places (the session file's folder, the registry, the folder of harness
// entries, the cgroup tree).
type metaOp struct{ op, place string }

// TestMetadataOps: every create, link, rename and unlink a guarded run of
// a new and of an existing session file makes, counted under strace, each
// for a rule of docs/spec.md; one more fails the test, so that none creeps
// back. On ext4 each create costs about 1.7 ms.
func TestMetadataOps(t *testing.T) {
	requireTool(t, "strace")
	padrun := buildPadrun(t)
	dir := t.TempDir()
	// The first run of an executable makes the entries every later run
	// of it shares (§7): made here, so that each case counts a run's own.
	if err := os.MkdirAll(filepath.Join(dir, "s"), 0o700); err != nil {
		t.Fatal(err)
	}
	traceOps(t, padrun, dir, filepath.Join(dir, "s", "first.jsonl"))
	for _, c := range []struct{ name, file string }{{"new", "N.jsonl"}, {"existing", "E.jsonl"}} {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(dir, "s", c.file)
			if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
				t.Fatal(err)
			}
			if c.name == "existing" {
				if err := os.WriteFile(file, []byte("{}\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			got := traceOps(t, padrun, dir, file)
			// The marker and the record are written before the child
			// starts (§2), and once more with the child's pid and start
			// (§5.3's orphan rule, §6's child_pid).
			want := map[metaOp]int{
				{"create", "session"}:  3, // F.live.lock (§5.1), the marker's temp file twice (§5.4)
				{"link", "session"}:    1, // the marker moved into place where none exists (§5.4)
				{"rename", "session"}:  1, // the marker with the child, over the first
				{"unlink", "session"}:  3, // the first temp's name, then marker and lock at the release (§10)
				{"create", "registry"}: 5, // its lock at each write and at the removal, the record's temp twice (§6)
				{"rename", "registry"}: 2, // the record into place, twice (§6)
				{"unlink", "registry"}: 1, // the record at the release (§10)
				{"symlink", "shims"}:   1, // the run's folder of harness entries (§7), a name for the shared entries
				{"unlink", "shims"}:    1,
			}
			if got[metaOp{"mkdir", "cgroup"}] > 0 { // where cgroups are delegated (§5 rule 5)
				want[metaOp{"mkdir", "cgroup"}], want[metaOp{"rmdir", "cgroup"}] = 1, 1
			}
			for _, k := range sortedOps(got, want) {
				if got[k] != want[k] {
					t.Errorf("%s %s: %d, want %d", k.op, k.place, got[k], want[k])
				}
			}
		})
	}
}

// waitChild is the run's child: it ends once padrun has written it into
// the marker ($1) and the record (in $2), as it does for every child that
// outlives its start.
const waitChild = `until grep -q '"childPid"' "$1" && grep -q '"child_pid"' "$2"/*.json; do sleep 0.01; done`

// traceOps runs padrun --guard file under strace, with waitChild as its
// child, and counts its metadata operations by place; failed ones count
// too.
func traceOps(t *testing.T, padrun, dir, file string) map[metaOp]int {
	trace := filepath.Join(t.TempDir(), "trace")
	cmd := exec.Command("strace", "-f", "-qq", "-y", "-o", trace,
		"-e", "trace=openat,creat,link,linkat,rename,renameat,renameat2,unlink,unlinkat,mkdir,mkdirat,rmdir,symlink,symlinkat",
		padrun, "--guard", file, "--", "sh", "-c", waitChild, "sh", file+".live.json", filepath.Join(dir, "reg"))
	cmd.Env = append(os.Environ(), "PADRUN_REGISTRY_DIR="+filepath.Join(dir, "reg"), "XDG_RUNTIME_DIR="+filepath.Join(dir, "run"))
	if err := os.MkdirAll(filepath.Join(dir, "run"), 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("padrun under strace: %v\n%s", err, out)
	}
	b, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	places := map[string]string{
		filepath.Dir(file) + "/": "session", filepath.Join(dir, "reg") + "/": "registry",
		filepath.Join(dir, "run", "padrun") + "/": "shims", "/sys/fs/cgroup/": "cgroup",
	}
	got := map[metaOp]int{}
	for _, l := range strings.Split(string(b), "\n") {
		op, path := classify(l)
		if op == "" {
			continue
		}
		for prefix, place := range places {
			if strings.HasPrefix(path, prefix) {
				got[metaOp{op, place}]++
			}
		}
	}
	return got
}

var (
	traced = regexp.MustCompile(`^\d+ +(\w+)\((.*)$`)
	// A path argument: "NAME" alone, or a folder's descriptor as strace
	// -y shows it (3</some/folder>, AT_FDCWD) and then "NAME".
	pathArg = regexp.MustCompile(`(?:(?:\d+<([^>]*)>|AT_FDCWD), )?"([^"]*)"`)
)

// classify names the metadata operation of one strace line and the path
// it makes or removes ("" for none: reads, and opens without O_CREAT).
func classify(line string) (op, path string) {
	m := traced.FindStringSubmatch(line)
	if m == nil {
		return "", ""
	}
	call, args := m[1], m[2]
	paths := pathArg.FindAllStringSubmatch(args, -1)
	if len(paths) == 0 {
		return "", ""
	}
	at := func(p []string) string {
		if p[1] != "" && !filepath.IsAbs(p[2]) {
			return filepath.Join(p[1], p[2])
		}
		return p[2]
	}
	path = at(paths[0])
	switch call {
	case "openat", "creat":
		if call == "openat" && !strings.Contains(args, "O_CREAT") {
			return "", ""
		}
		return "create", path
	case "link", "linkat":
		return "link", path
	case "rename", "renameat", "renameat2":
		return "rename", path
	case "unlink", "unlinkat":
		if strings.Contains(args, "AT_REMOVEDIR") {
			return "rmdir", path
		}
		return "unlink", path
	case "mkdir", "mkdirat":
		return "mkdir", path
	case "rmdir":
		return "rmdir", path
	case "symlink", "symlinkat":
		if len(paths) < 2 {
			return "", ""
		}
		return "symlink", at(paths[1]) // the first is the target
	}
	return "", ""
}

// sortedOps is every key of a and b, in order.
func sortedOps(a, b map[metaOp]int) []metaOp {
	var ks []metaOp
	for _, m := range []map[metaOp]int{a, b} {
		for k := range m {
			if !slices.Contains(ks, k) {
				ks = append(ks, k)
			}
		}
	}
	slices.SortFunc(ks, func(x, y metaOp) int { return strings.Compare(x.place+x.op, y.place+y.op) })
	return ks
}
