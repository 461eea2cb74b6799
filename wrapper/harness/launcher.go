package harness

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// launchers are the interpreters a harness's script may be run by
// (`padrun --harness pi -- node .../dist/cli.js -p x`).
var launchers = []string{"node", "nodejs", "bun"}

// nodeValueOptions are node's options (node 20-24, `node --help`) whose
// value may be the next argument; in the NAME=VALUE form they are one.
var nodeValueOptions = []string{
	"-r", "--require", "--import", "--loader", "--experimental-loader", "-C", "--conditions",
	"--env-file", "--env-file-if-exists", "--title", "--inspect-port", "--debug-port", "--watch-path",
	"--icu-data-dir", "--openssl-config", "--redirect-warnings", "--report-dir", "--report-directory",
	"--report-filename", "--report-signal", "--diagnostic-dir", "--heapsnapshot-signal",
	"--heapsnapshot-near-heap-limit", "--secure-heap", "--secure-heap-min", "--max-http-header-size",
	"--unhandled-rejections", "--dns-result-order", "--tls-cipher-list", "--tls-keylog",
	"--tls-min-v1.0", "--use-largepages", "--experimental-default-type", "--disable-warning",
	"--trace-event-categories", "--trace-event-file-pattern", "--cpu-prof-dir", "--cpu-prof-name",
	"--cpu-prof-interval", "--heap-prof-dir", "--heap-prof-name", "--heap-prof-interval",
	"--localstorage-file", "--snapshot-blob", "--allow-fs-read", "--allow-fs-write",
	"--stack-trace-limit", "--max-old-space-size", "--max-semi-space-size", "--stack-size",
}

// nodeNotAScript are node's options after which no harness script runs
// (code given inline or on stdin, a syntax check, a REPL, node's own help):
// padrun cannot read a harness's arguments there.
var nodeNotAScript = []string{
	"-e", "--eval", "-p", "--print", "-", "--input-type", "-i", "--interactive", "-c", "--check",
	"--test", "--run", "-v", "--version", "-h", "--help", "--v8-options", "--completion-bash",
}

// nodeFlags are node's options that never take a value, the ones a
// harness's launch line carries.
var nodeFlags = []string{
	"--inspect", "--inspect-brk", "--inspect-wait", "--no-warnings", "--no-deprecation",
	"--trace-warnings", "--trace-deprecation", "--throw-deprecation", "--pending-deprecation",
	"--enable-source-maps", "--expose-gc", "--preserve-symlinks", "--preserve-symlinks-main",
	"--experimental-vm-modules", "--experimental-strip-types", "--no-experimental-strip-types",
	"--experimental-transform-types", "--experimental-require-module", "--no-experimental-require-module",
	"--experimental-detect-module", "--no-experimental-detect-module", "--experimental-wasm-modules",
	"--experimental-websocket", "--no-experimental-fetch", "--experimental-sqlite", "--no-experimental-sqlite",
	"--abort-on-uncaught-exception", "--frozen-intrinsics", "--zero-fill-buffers", "--cpu-prof", "--heap-prof",
	"--no-addons", "--no-global-search-paths", "--trace-uncaught", "--trace-exit", "--trace-sigint",
	"--report-on-fatalerror", "--report-uncaught-exception", "--report-on-signal", "--experimental-permission",
	"--permission", "--allow-child-process", "--allow-worker", "--allow-addons", "--allow-wasi", "--watch",
	"--watch-preserve-output", "--use-openssl-ca", "--use-bundled-ca", "--use-system-ca", "--force-fips",
	"--enable-fips", "--no-experimental-global-navigator", "--experimental-network-inspection",
	"--no-network-family-autoselection", "--experimental-eventsource", "--experimental-webstorage",
	"--expose-internals", "--no-force-async-hooks-checks", "--insecure-http-parser", "--jitless",
	"--node-memory-debug", "--prof", "--prof-process", "--trace-tls", "--trace-sync-io", "--verify-base-objects",
}

// bunFlags are bun's options (bun 1.x, `bun --help`) that take no value;
// bunValueOptions the ones whose value may be the next argument.
var (
	bunFlags        = []string{"--watch", "--hot", "--no-clear-screen", "--smol", "--bun", "-b", "--silent", "--no-install", "--no-env-file", "--inspect", "--inspect-wait", "--inspect-brk"}
	bunValueOptions = []string{"-r", "--preload", "--require", "--import", "--cwd", "--env-file", "--config", "-c", "--conditions", "--main-fields", "--tsconfig-override", "--install", "--define", "-d", "--loader", "-l", "--port"}
)

// LauncherError is a command line whose interpreter padrun finds but whose
// harness's arguments it cannot tell apart (node -e, an option it does not
// know, no script): the run is refused (exit 125), never guessed.
type LauncherError struct {
	Harness string
	Argv    []string // the launcher as given, up to what stopped padrun
	Why     string
}

func (e *LauncherError) Error() string {
	return fmt.Sprintf("harness: cannot find %s's arguments in %s (%s): run padrun --harness %s -- %s [options] SCRIPT [%s's arguments], or the %s command itself",
		e.Harness, strings.Join(e.Argv, " "), e.Why, e.Harness, filepath.Base(e.Argv[0]), e.Harness, e.Harness)
}

// IsLauncher reports whether argv0 is an interpreter that runs a harness's
// script.
func IsLauncher(argv0 string) bool { return slices.Contains(launchers, filepath.Base(argv0)) }

// SplitLauncher splits a command line into its launcher (interpreter, its
// options and nothing else) and the harness's own argv, which starts with
// the script, as if the script were the command; for a command that is no
// interpreter the launcher is empty and args is argv. Adapters read, pin and
// load companions on args only; the run puts launcher back in front. An
// interpreter line padrun cannot read is a *LauncherError naming harness.
func SplitLauncher(harness string, argv []string) (launcher, args []string, err error) {
	if len(argv) == 0 || !IsLauncher(argv[0]) {
		return nil, argv, nil
	}
	bun := filepath.Base(argv[0]) == "bun"
	flags, values := nodeFlags, nodeValueOptions
	if bun {
		flags, values = bunFlags, bunValueOptions
	}
	fail := func(i int, why string) ([]string, []string, error) {
		return nil, nil, &LauncherError{Harness: harness, Argv: slices.Clone(argv[:min(i+1, len(argv))]), Why: why}
	}
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		name, _, hasValue := strings.Cut(a, "=")
		switch {
		case a == "--":
			if i+1 == len(argv) {
				return fail(i, "no script")
			}
			return split(argv, i+1)
		case a == "-" || !bun && slices.Contains(nodeNotAScript, name):
			return fail(i, a+" runs no script")
		case !strings.HasPrefix(a, "-"):
			if bun && i == 1 && a == "run" {
				continue
			}
			if bun && !strings.ContainsRune(a, '/') && filepath.Ext(a) == "" {
				return fail(i, "bun "+a+" is not a script: padrun reads bun SCRIPT")
			}
			return split(argv, i)
		case hasValue && strings.HasPrefix(a, "--"):
		case slices.Contains(flags, a):
		case slices.Contains(values, a):
			if i+1 == len(argv) {
				return fail(i, a+" lacks its value")
			}
			i++
		default:
			return fail(i, "padrun does not know "+a+", which may take a value")
		}
	}
	return fail(len(argv)-1, "no script")
}

// split is argv's launcher, before script, and the harness's argv from
// script on.
func split(argv []string, script int) ([]string, []string, error) {
	return slices.Clone(argv[:script]), slices.Clone(argv[script:]), nil
}

// harnessArgs is argv without its launcher, once SplitLauncher has accepted
// it (Resolve refuses the rest).
func harnessArgs(argv []string) (launcher, args []string) {
	l, a, err := SplitLauncher("", argv)
	if err != nil {
		return nil, argv
	}
	return l, a
}
