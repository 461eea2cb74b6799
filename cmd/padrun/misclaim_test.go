//go:build linux

package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/padrun/padrun/wrapper/harness"
)

var misclaimRounds = flag.Int("misclaim-rounds", 10, "rounds of the misclaim race with the real harnesses")

// misclaim pi SOURCE | misclaim codex OTHERDIR | misclaim qwen runs the race of a folder
// watcher against another run's new session file, -misclaim-rounds times.
// pi: a padrun whose pi runs in the project while a second padrun forks
// SOURCE there; the fork's file is never claimed by the first, and it is
// claimed by the second when padrun can see writers' pids (root). codex: a
// wrapped codex runs in the script's folder while another codex, unwrapped
// or wrapped, starts a session in OTHERDIR; its rollout is never claimed by
// the first. qwen: a padrun whose qwen runs in the project without its
// companion, so that its folder watch claims, while another qwen, unwrapped
// or wrapped, starts a session in the same project; that session is never
// claimed by the first (at most 4 rounds: qwen takes seconds to start).
func cmdMisclaim(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		if len(args) != 1 || args[0] != "qwen" || neg {
			ts.Fatalf("usage: misclaim pi SOURCE | misclaim codex OTHERDIR | misclaim qwen")
		}
	}
	for k := range *misclaimRounds {
		switch args[0] {
		case "pi":
			misclaimPi(ts, k, ts.MkAbs(args[1]))
		case "codex":
			misclaimCodex(ts, k, ts.MkAbs(args[1]))
		case "qwen":
			if k < 4 {
				misclaimQwen(ts, k)
			}
		default:
			ts.Fatalf("misclaim: unknown harness %s", args[0])
		}
	}
}

func misclaimPi(ts *testscript.TestScript, k int, source string) {
	cwd, err := filepath.EvalSymlinks(ts.MkAbs("."))
	ts.Check(err)
	dir := filepath.Join(ts.Getenv("PI_CODING_AGENT_DIR"), "sessions", harness.PiProjectDir(cwd))
	tag := fmt.Sprintf("misclaim-pi-%d", k)
	a := startProc(ts, []string{"PADRUN_LOG_LEVEL=debug", "padrun", "--", "pi", "-p", "--session", tag + ".jsonl", "WAITFOR:" + tag})
	waitModel(ts, a, tag)
	before := listDir(dir)
	b := startProc(ts, []string{"PADRUN_LOG_LEVEL=info", "padrun", "--", "pi", "-p", "--fork", source, "fork " + tag})
	bErr := finish(ts, b, "0")
	fork := newFile(ts, dir, before)
	if _, err := os.Stat(fork + ".live.json"); err == nil {
		ts.Fatalf("round %d: the fork %s is still held after its padrun ended: %s", k, fork, ts.ReadFile(fork+".live.json"))
	}
	if os.Geteuid() == 0 && !strings.Contains(bErr, "claimed new session file") {
		ts.Fatalf("round %d: the forking padrun did not claim its fork %s:\n%s", k, fork, bErr)
	}
	ts.Check(os.Mkdir(filepath.Join(ts.Getenv("WORK"), tag), 0o700))
	aErr := finish(ts, a, "0")
	if strings.Contains(aErr, "claimed new session file") {
		ts.Fatalf("round %d: the watching padrun claimed another run's fork:\n%s", k, aErr)
	}
}

func misclaimCodex(ts *testscript.TestScript, k int, other string) {
	sessions := filepath.Join(ts.Getenv("CODEX_HOME"), "sessions")
	tag := fmt.Sprintf("misclaim-codex-%d", k)
	a := startProc(ts, []string{"PADRUN_LOG_LEVEL=debug", "padrun", "--", "codex", "exec", "--skip-git-repo-check", "WAITFOR:" + tag})
	waitModel(ts, a, tag)
	before := listTree(sessions)
	wrap := ""
	if k%2 == 1 {
		wrap = "padrun -- " // odd rounds: the other project's codex is wrapped too
	}
	b := startProc(ts, []string{"sh", "-c", "cd " + strconv.Quote(other) + " && exec " + wrap + "codex exec --skip-git-repo-check 'other " + tag + "'"})
	finish(ts, b, "0")
	var rollout string
	for _, p := range listTree(sessions) {
		if !slices.Contains(before, p) && strings.HasSuffix(p, ".jsonl") {
			rollout = p
		}
	}
	if rollout == "" {
		ts.Fatalf("round %d: the other project's codex left no new rollout", k)
	}
	if _, err := os.Stat(rollout + ".live.json"); err == nil {
		ts.Fatalf("round %d: the other project's rollout %s is held: %s", k, rollout, ts.ReadFile(rollout+".live.json"))
	}
	if k == 0 {
		id := harness.HeaderID(rollout)
		finish(ts, startProc(ts, []string{"sh", "-c", "cd " + strconv.Quote(other) + " && exec padrun -- codex exec --skip-git-repo-check resume " + id + " 'again " + tag + "'"}), "0")
	}
	ts.Check(os.Mkdir(filepath.Join(ts.Getenv("WORK"), tag), 0o700))
	aErr := finish(ts, a, "0")
	for _, line := range strings.Split(aErr, "\n") {
		if strings.Contains(line, "claimed new session file") && strings.Contains(line, filepath.Base(rollout)) {
			ts.Fatalf("round %d: the wrapped codex claimed another project's rollout:\n%s", k, line)
		}
	}
}

func misclaimQwen(ts *testscript.TestScript, k int) {
	projects := filepath.Join(ts.Getenv("QWEN_HOME"), "projects")
	tag := fmt.Sprintf("misclaim-qwen-%d", k)
	a := startProc(ts, []string{"PADRUN_LOG_LEVEL=debug", "padrun", "--no-companion", "--", "qwen", "-p", "WAITFOR:" + tag})
	waitModel(ts, a, tag)
	wrap := ""
	if k%2 == 1 {
		wrap = "padrun -- " // odd rounds: the other qwen is wrapped too
	}
	b := startProc(ts, []string{"PADRUN_LOG_LEVEL=info", "sh", "-c", "exec " + wrap + "qwen -p 'other " + tag + "'"})
	bErr := finish(ts, b, "0")
	var other string
	for _, p := range listTree(projects) {
		if strings.HasSuffix(p, ".jsonl") && strings.Contains(ts.ReadFile(p), "other "+tag) {
			other = p
		}
	}
	if other == "" {
		ts.Fatalf("round %d: the other qwen left no session file", k)
	}
	if _, err := os.Stat(other + ".live.json"); err == nil {
		ts.Fatalf("round %d: the other qwen's session %s is held after it ended: %s", k, other, ts.ReadFile(other+".live.json"))
	}
	if wrap != "" && !strings.Contains(bErr, "claimed") && os.Geteuid() == 0 {
		ts.Fatalf("round %d: the other padrun did not claim its session %s:\n%s", k, other, bErr)
	}
	ts.Check(os.Mkdir(filepath.Join(ts.Getenv("WORK"), tag), 0o700))
	aErr := finish(ts, a, "0")
	for _, line := range strings.Split(aErr, "\n") {
		if strings.Contains(line, "claimed new session file") && strings.Contains(line, filepath.Base(other)) {
			ts.Fatalf("round %d: the watching padrun claimed the other qwen's session:\n%s", k, line)
		}
	}
	if !strings.Contains(aErr, "claimed new session file") && os.Geteuid() == 0 {
		ts.Fatalf("round %d: the watching padrun did not claim its own session:\n%s", k, aErr)
	}
}

// waitModel waits (at most two minutes) until the fake model holds the
// request tagged WAITFOR:tag, failing with p's stderr should p end first.
func waitModel(ts *testscript.TestScript, p *proc, tag string) {
	log := filepath.Join(ts.Getenv("WORK"), "model.log")
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(log); err == nil && (strings.Contains(string(b), "WAITFOR:"+tag+`"`) || strings.Contains(string(b), "WAITFOR:"+tag+" ")) {
			return
		}
		select {
		case <-p.done:
			ts.Fatalf("%v ended (%s) before its request reached the model:\n%s", p.cmd.Args, describeExit(p.cmd.ProcessState), p.stderr.String())
		default:
		}
	}
	b, _ := os.ReadFile(log)
	ts.Fatalf("the request WAITFOR:%s never reached the model; %v says:\n%s\nmodel.log:\n%s", tag, p.cmd.Args, p.stderr.String(), b)
}

// finish waits for a started process, checks its exit status, and returns
// its stderr.
func finish(ts *testscript.TestScript, p *proc, want string) string {
	<-p.done
	if got := describeExit(p.cmd.ProcessState); got != want {
		ts.Fatalf("%v ended with %s, want %s\nstderr:\n%s", p.cmd.Args, got, want, p.stderr.String())
	}
	return p.stderr.String()
}

func listDir(dir string) []string {
	des, _ := os.ReadDir(dir)
	var out []string
	for _, de := range des {
		out = append(out, filepath.Join(dir, de.Name()))
	}
	return out
}

func listTree(dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, path)
		}
		return nil
	})
	return out
}

// newFile returns the one new session file in dir.
func newFile(ts *testscript.TestScript, dir string, before []string) string {
	var found []string
	for _, p := range listDir(dir) {
		if !slices.Contains(before, p) && strings.HasSuffix(p, ".jsonl") {
			found = append(found, p)
		}
	}
	if len(found) != 1 {
		b, _ := json.Marshal(found)
		ts.Fatalf("want one new session file in %s, found %s", dir, b)
	}
	return found[0]
}
