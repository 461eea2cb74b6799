package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/padrun/padrun/wrapper/harness"
)

// No flag, environment variable or build tag of the shipped binary turns
// enforcement off (docs/spec.md §7). These tests list every one there is, so
// that a new one fails here until it is reviewed and added.

func TestNoBypass_Flags(t *testing.T) {
	fs := pflag.NewFlagSet("padrun", pflag.ContinueOnError)
	new(runFlags).addFlags(fs)
	var got []string
	fs.VisitAll(func(f *pflag.Flag) { got = append(got, f.Name) })
	// Each of these chooses what to guard or how to run; none skips the lock,
	// the marker or the verdict. --no-companion leaves switches inside the
	// harness unguarded (docs/spec.md §4.5, said on stderr); the session it starts with
	// is guarded all the same. The --etcd flags add a hold across machines
	// beside the local one, never instead of it (docs/spec.md §15); --session-key
	// names its key. --no-nested-guard leaves the child's PATH alone: a
	// harness started inside the session is then seen only at its own
	// start (docs/spec.md §7); the run's own files are guarded all the same.
	want := []string{"agent", "etcd", "etcd-cacert", "etcd-cert", "etcd-key", "etcd-prefix", "etcd-ttl", "etcd-user",
		"grace", "guard", "harness", "heartbeat", "log-file", "log-format",
		"log-level", "no-companion", "no-nested-guard", "no-pin", "pty", "record", "session-key", "strict", "timeout", "verbose", "wait"}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("run flags %v, want %v: review any new flag against docs/spec.md §7", got, want)
	}
}

// sources returns the shipped Go files: not tests, nor the packages only
// tests import (childtest, jsonenctest).
func sources(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".cache" || d.Name() == "testdata" || strings.HasSuffix(d.Name(), "test") || strings.HasPrefix(d.Name(), ".git")) {
			return filepath.SkipDir
		}
		if strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			out[path] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 10 {
		t.Fatalf("found only %d source files", len(out))
	}
	return out
}

func TestNoBypass_Environment(t *testing.T) {
	// Read by padrun: identity, logs, the registry folder, and the harnesses'
	// own folders (where their session files are). Set for the child: the
	// session's variables. None disables enforcement.
	allowed := map[string]bool{
		"PAD_SESSION_PID": true, "PAD_AGENT": true, "PADRUN_REGISTRY_DIR": true,
		"PADRUN_LOG_LEVEL": true, "PADRUN_LOG_FORMAT": true, "PADRUN_LOG_FILE": true,
		"PADRUN_SESSION_FILE": true, "PADRUN_MARKER": true, "PADRUN_VERSION": true,
		"PATH": true, "PI_CODING_AGENT_DIR": true, "PI_CODING_AGENT_SESSION_DIR": true,
		// The control socket of the companions (docs/spec.md §4.5): where padrun puts it,
		// and how the claude hook finds it; a wrong one fails closed.
		"PADRUN_CONTROL": true, "XDG_RUNTIME_DIR": true,
		// padrun's state folder: the untested harness releases it warned about.
		"XDG_STATE_HOME": true,
		// etcd's endpoints: a hold across machines beside the local one.
		"PADRUN_ETCD": true,
		// pi 1.x's -r --name, handed to the companion to set once the pick
		// is held; removed from what the child inherits otherwise.
		"PADRUN_PI_NAME": true,
		// opencode's and kilo's companion: the folder of its session guards,
		// whether a refused claim ends the run, and --wait for its claims.
		// Set for the child only; an outer run's are dropped.
		"PADRUN_SESSIONS": true, "PADRUN_STOP": true, "PADRUN_WAIT": true,
		// qwen's system defaults file, where padrun puts its companion's
		// hooks; one of the user's own is kept, and the companion is then off
		// with a warning (the outer guard still holds).
		"QWEN_CODE_SYSTEM_DEFAULTS_PATH": true, "QWEN_CODE_SYSTEM_SETTINGS_PATH": true,
		// kilo run -c: its companion claims the pick as it loads, before
		// kilo's prompt can remove the holder's unfinished reply.
		"PADRUN_CONTINUE": true,
		// Named in the help; COLUMNS only sizes ls's table.
		"HOME": true, "COLUMNS": true,
	}
	// Each harness's own folders, as its adapter declares them (and the
	// help names them): where its session files are.
	for _, name := range harness.Names() {
		a, _ := harness.Lookup(name)
		for _, v := range a.Env {
			allowed[v.Name] = true
		}
	}
	names := regexp.MustCompile(`"((?:PAD|PADRUN|PI|CLAUDE|CODEX|GEMINI|QWEN|COPILOT|OPENCODE|KILO)_[A-Z_]+|PATH|HOME)[="]`)
	reads := regexp.MustCompile(`(Getenv|LookupEnv)\(([^)]*)\)`)
	for path, src := range sources(t) {
		for _, m := range names.FindAllStringSubmatch(src, -1) {
			if !allowed[m[1]] {
				t.Errorf("%s names the variable %s: review it against docs/spec.md §7", path, m[1])
			}
		}
		for _, m := range reads.FindAllStringSubmatch(src, -1) {
			arg := strings.TrimSpace(m[2])
			if arg == "k" || arg == "key" || arg == "key string" || arg == "EnvDir" || arg == "env" || strings.HasPrefix(arg, "h.") {
				continue // the adapters' and logs' own lookups, of names checked above
			}
			if name := strings.Trim(arg, `"`); !allowed[name] {
				t.Errorf("%s reads %s(%s): review it against docs/spec.md §7", path, m[1], arg)
			}
		}
	}
}

func TestNoBypass_BuildTags(t *testing.T) {
	tag := regexp.MustCompile(`(?m)^//go:build (.*)$`)
	word := regexp.MustCompile(`[A-Za-z0-9_.]+`)
	osNames := map[string]bool{"linux": true, "darwin": true, "windows": true, "unix": true, "dragonfly": true, "freebsd": true, "netbsd": true, "openbsd": true}
	for path, src := range sources(t) {
		for _, m := range tag.FindAllStringSubmatch(src, -1) {
			for _, w := range word.FindAllString(m[1], -1) {
				if !osNames[w] {
					t.Errorf("%s builds on the tag %q: only operating systems may select code", path, w)
				}
			}
		}
	}
}
