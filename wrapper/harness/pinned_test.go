package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The pinned harnesses, as ./test.sh installs them: one npm prefix a
// column, with its Node.js.
var columns = []string{"oldest", "newest"}

// pinnedModules is a column's node_modules; it skips t off CI, and fails
// it under CI, when the column is not installed.
func pinnedModules(t *testing.T, column string) string {
	t.Helper()
	dir, _ := filepath.Abs(filepath.Join("..", "..", ".cache", "harness", column, "node_modules"))
	if _, err := os.Stat(filepath.Join(dir, ".bin", "node")); err != nil {
		msg := fmt.Sprintf("the %s column is not installed in %s: run ./test.sh, which installs the pinned harnesses", column, dir)
		if os.Getenv("CI") != "" {
			t.Fatalf("%s (CI is set: nothing may be skipped)", msg)
		}
		t.Skipf("skipped: %s (it fails instead when CI is set)", msg)
	}
	return dir
}

const piPackage = "@earendil-works/pi-coding-agent"

func pinnedPi(t *testing.T, column string) (modules, version string, r piRules) {
	modules = pinnedModules(t, column)
	b, err := os.ReadFile(filepath.Join(modules, piPackage, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct{ Version string }
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatal(err)
	}
	return modules, pkg.Version, piRulesFor(pkg.Version)
}

// piArgsBranches reads the flags of pi's parseArgs from its args.js: each
// branch of its if/else chain, the flags it compares arg with, and whether
// it takes the next argument.
func piArgsBranches(t *testing.T, src string) map[string]bool {
	t.Helper()
	start := strings.Index(src, "export function parseArgs(")
	if start < 0 {
		t.Fatal("args.js has no parseArgs")
	}
	body := src[start:]
	body = body[:strings.Index(body, "\n}\n")]
	flags := map[string]bool{} // flag -> takes a value
	branch := regexp.MustCompile(`(?m)^        (?:else )?if \(`)
	flag := regexp.MustCompile(`arg === "(-[^"]*)"`)
	idx := branch.FindAllStringIndex(body, -1)
	for i, at := range idx {
		end := len(body)
		if i+1 < len(idx) {
			end = idx[i+1][0]
		}
		text := body[at[0]:end]
		head, _, _ := strings.Cut(text, "\n")
		takes := strings.Contains(text, "args[++i]") || strings.Contains(text, "i++")
		for _, m := range flag.FindAllStringSubmatch(head, -1) {
			flags[m[1]] = takes
		}
	}
	if len(flags) < 20 {
		t.Fatalf("read only %d flags from parseArgs: has args.js changed shape?", len(flags))
	}
	return flags
}

// TestPiFlags_MatchPinnedPi: every flag of the pinned pi's parseArgs, in
// both columns, is one padrun knows for that release, taking a value
// exactly when pi's does, and padrun knows no flag that pi lacks.
func TestPiFlags_MatchPinnedPi(t *testing.T) {
	for _, column := range columns {
		t.Run(column, func(t *testing.T) {
			modules, version, r := pinnedPi(t, column)
			src, err := os.ReadFile(filepath.Join(modules, piPackage, "dist", "cli", "args.js"))
			if err != nil {
				t.Fatal(err)
			}
			flags := piArgsBranches(t, string(src))
			for name, takes := range flags {
				if name == "--" {
					if !r.newer {
						t.Errorf("pi %s has a \"--\" terminator, which padrun's rules for %s lack", version, r.release)
					}
					continue
				}
				kind, ok := r.flags[name]
				switch {
				case !ok && takes:
					t.Errorf("pi %s has the value flag %s, which padrun does not know", version, name)
				case !ok:
					t.Errorf("pi %s has the flag %s, which padrun does not know", version, name)
				case takes != (kind != piBool):
					t.Errorf("pi %s: %s takes a value: %v; padrun's rules for %s say %v", version, name, takes, r.release, kind != piBool)
				}
			}
			for name := range r.flags {
				if _, ok := flags[name]; !ok {
					t.Errorf("padrun's rules for %s know %s, which pi %s does not have", r.release, name, version)
				}
			}
			if _, ok := flags["--"]; !ok && r.newer {
				t.Errorf("padrun's rules for %s end the flags at \"--\"; pi %s does not", r.release, version)
			}
		})
	}
}

// piParsed is what both parsers say of one argv.
type piParsed struct {
	Messages   []string `json:"messages"`
	FileArgs   []string `json:"fileArgs"`
	Unknown    []string `json:"unknown"`
	BadShort   []string `json:"badShort"`
	Session    string   `json:"session"`
	SessionDir string   `json:"sessionDir"`
	Fork       string   `json:"fork"`
	SessionID  string   `json:"sessionId"`
	Continue   bool     `json:"continue"`
	Resume     bool     `json:"resume"`
	NoSession  bool     `json:"noSession"`
	Print      bool     `json:"print"`
	Mode       string   `json:"mode"`
}

// piParseScript runs the pinned pi's own parseArgs on every argv read from
// stdin and writes what it found.
const piParseScript = `
const { parseArgs } = await import(process.argv[1]);
let input = "";
for await (const chunk of process.stdin) input += chunk;
const out = JSON.parse(input).map((argv) => {
	const r = parseArgs(argv);
	return {
		messages: r.messages, fileArgs: r.fileArgs, unknown: [...r.unknownFlags.keys()],
		badShort: r.diagnostics.filter((d) => d.message.startsWith("Unknown option: ")).map((d) => d.message.slice(16)),
		session: r.session ?? "", sessionDir: r.sessionDir ?? "", fork: r.fork ?? "", sessionId: r.sessionId ?? "",
		continue: !!r.continue, resume: !!r.resume, noSession: !!r.noSession, print: !!r.print, mode: r.mode ?? "",
	};
});
process.stdout.write(JSON.stringify(out));
`

// TestPiParse_AgreesWithPinnedPi runs the pinned pi's parseArgs, in both
// columns, on every flag it has (and a few it has not) followed by every
// kind of next argument, and compares what padrun's parser reads: the
// messages, @files, unknown flags and the session flags' values.
func TestPiParse_AgreesWithPinnedPi(t *testing.T) {
	for _, column := range columns {
		t.Run(column, func(t *testing.T) {
			modules, version, r := pinnedPi(t, column)
			argsJS := filepath.Join(modules, piPackage, "dist", "cli", "args.js")
			src, err := os.ReadFile(argsJS)
			if err != nil {
				t.Fatal(err)
			}
			var firsts []string
			for name := range piArgsBranches(t, string(src)) {
				firsts = append(firsts, name)
			}
			slices.Sort(firsts)
			firsts = append(firsts, "--", "--ext", "--ext=v", "-z", "@f", "word", "---x", "-")
			nexts := []string{"w", "-x", "--y", "@g", "---z", "--", "-c", "text", "json", "rpc", "regular", "dark"}
			var probes [][]string
			for _, a := range firsts {
				probes = append(probes, []string{a})
				for _, b := range nexts {
					probes = append(probes, []string{a, b}, []string{a, b, "tail"}, []string{a, b, "--session", "s"})
				}
			}
			probes = append(probes,
				[]string{"-p", "--", "--session", "01a23074-0d21"}, []string{"--", "-c", "@f", "--", "x"},
				[]string{"--name", "--", "-c"}, []string{"-c", "--session-dir", "d", "--fork", "f", "--session-id", "i"})
			in, _ := json.Marshal(probes)
			cmd := exec.Command(filepath.Join(modules, ".bin", "node"), "--input-type=module", "-e", piParseScript, argsJS)
			cmd.Stdin = bytes.NewReader(in)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("pi %s's parseArgs: %v\n%s", version, err, stderr.String())
			}
			var theirs []piParsed
			if err := json.Unmarshal(out, &theirs); err != nil || len(theirs) != len(probes) {
				t.Fatalf("pi %s's parseArgs said %d results (%v), want %d", version, len(theirs), err, len(probes))
			}
			bad := 0
			for i, argv := range probes {
				ours := r.parsed(append([]string{"pi"}, argv...))
				if j, _ := json.Marshal(ours); !bytes.Equal(j, mustJSON(theirs[i])) {
					if bad++; bad <= 20 {
						t.Errorf("pi %s reads %q as\n  %s\npadrun's rules for %s read\n  %s", version, argv, mustJSON(theirs[i]), r.release, j)
					}
				}
			}
		})
	}
}

// parsed is what padrun's parser reads of argv, in piParsed's terms.
func (r piRules) parsed(argv []string) piParsed {
	a := r.parse(argv)
	var unknown []string
	for _, u := range a.unknown {
		if !slices.Contains(unknown, u) { // pi keeps them in a Map
			unknown = append(unknown, u)
		}
	}
	nonNil := func(s []string) []string {
		if s == nil {
			return []string{}
		}
		return s
	}
	p := piParsed{
		Messages: nonNil(a.messages), FileArgs: nonNil(a.fileArgs), Unknown: nonNil(unknown), BadShort: nonNil(a.badShort),
		Session: a.session, SessionDir: a.sessionDir, Fork: a.fork, Continue: a.cont, Resume: a.resume,
		NoSession: a.noSession, Print: a.print, Mode: a.mode,
	}
	if r.newer {
		p.SessionID = a.sessionID
	}
	return p
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
