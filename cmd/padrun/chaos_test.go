//go:build linux

package main

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/padrun/padrun/supervise/cgroup"
)

var chaosRounds = flag.Int("chaos-rounds", 200, "rounds of the SIGKILL chaos test")

// procsWith lists the pids whose command line holds arg.
func procsWith(arg string) []string {
	var pids []string
	des, _ := os.ReadDir("/proc")
	for _, de := range des {
		b, err := os.ReadFile("/proc/" + de.Name() + "/cmdline")
		if err == nil && bytes.Contains(b, []byte(arg)) {
			pids = append(pids, de.Name())
		}
	}
	return pids
}

// TestChaos_SIGKILL kills padrun at random moments: before the lock,
// between the marker and the exec, mid-run, during cleanup. After every
// round no process of its session is left, and a fresh padrun takes the
// file over; no two runs ever write at once.
func TestChaos_SIGKILL(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, seed))
	t.Logf("seed %d, %d rounds", seed, *chaosRounds)
	dir := t.TempDir()
	file := filepath.Join(dir, "s.jsonl")
	env := append(os.Environ(), "PADRUN_REGISTRY_DIR="+filepath.Join(dir, "reg"))
	killed := map[string]int{}
	for round := 0; round < *chaosRounds; round++ {
		tag := fmt.Sprintf("--round=%d", round) // marks this round's processes
		child := []string{"fakeharness", "--append", file, "--hang", tag}
		phase := "mid-run"
		if rng.IntN(2) == 0 {
			child = []string{"fakeharness", "--append", file, tag} // exits at once: the kill may land in cleanup
			phase = "short"
		}
		a := exec.Command("padrun", append([]string{"--guard", file, "--"}, child...)...)
		a.Env = env
		if err := a.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.IntN(8000)) * time.Microsecond) // a random moment, not synchronisation
		a.Process.Signal(syscall.SIGKILL)
		a.Wait()
		if ws := a.ProcessState.Sys().(syscall.WaitStatus); ws.Signaled() {
			killed[phase]++
		}
		deadline := time.Now().Add(5 * time.Second)
		for len(procsWith(tag)) > 0 {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: processes of a killed padrun outlive it by five seconds: %v", round, procsWith(tag))
			}
			time.Sleep(time.Millisecond)
		}
		b := exec.Command("padrun", "--wait", "10s", "--guard", file, "--", "fakeharness", "--append", file)
		b.Env = env
		var stderr bytes.Buffer
		b.Stderr = &stderr
		if err := b.Run(); err != nil {
			t.Fatalf("round %d: the next run did not take the file over: %v\n%s", round, err, stderr.String())
		}
		for _, p := range []string{file + ".live.json", file + ".live.lock"} {
			if _, err := os.Lstat(p); err == nil {
				t.Fatalf("round %d: %s left after a clean run", round, p)
			}
		}
	}
	// The session file: a killed run may leave a start without an end, but a
	// start is never followed by another run's end.
	lines := strings.Split(strings.TrimSpace(readFile(t, file)), "\n")
	open := ""
	for i, l := range lines {
		kind, pid, _ := strings.Cut(l, " ")
		switch kind {
		case "start":
			open = pid
		case "end":
			if pid != open {
				t.Fatalf("line %d: %q ends a run while %s was writing", i+1, l, open)
			}
			open = ""
		}
	}
	t.Logf("killed padrun %v times (short children, hanging children)", killed)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var chaosWriterRounds = flag.Int("chaos-writer-rounds", 40, "rounds of the SIGKILL chaos test whose children fork writers")

// chaosWriter appends a few lines tagged with its session, pausing now and
// then so that padrun's death finds it mid-write. $1 tags the round.
const chaosWriter = `i=0
while [ $i -lt 30 ]; do
	echo "w $PAD_SESSION_PID $$" >> "$F"
	i=$((i+1))
	[ $((i % 2)) = 0 ] && sleep 0.01
done
`

// TestChaos_SIGKILLWriters kills padrun at random moments while its child
// forks writers of its own: in the background, double-forked, and (where a
// cgroup holds the session) in a session of their own; the child waits for
// them or exits at once. The next run waits until every writer of the
// killed session is gone: the sessions' lines never interleave, and nothing
// of a round outlives the run after it.
func TestChaos_SIGKILLWriters(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, seed))
	t.Logf("seed %d, %d rounds", seed, *chaosWriterRounds)
	dir := t.TempDir()
	file := filepath.Join(dir, "s.jsonl")
	writer := filepath.Join(dir, "w.sh")
	if err := os.WriteFile(writer, []byte(chaosWriter), 0o600); err != nil {
		t.Fatal(err)
	}
	setsid := ""
	if cg := cgroup.New("chaos-probe-" + strconv.Itoa(os.Getpid())); cg != nil {
		cg.Remove()
		setsid = "setsid sh \"$W\" \"$T\" & "
	} else {
		t.Log("no cgroup of the session's own here: setsid writers left out (they escape the child's group)")
	}
	env := append(os.Environ(), "PADRUN_REGISTRY_DIR="+filepath.Join(dir, "reg"), "F="+file, "W="+writer)
	killed := 0
	for round := 0; round < *chaosWriterRounds; round++ {
		tag := fmt.Sprintf("chaos-round-%d-%d", os.Getpid(), round)
		script := `echo "c $PAD_SESSION_PID" >> "$F"; sh "$W" "$T" & (sh "$W" "$T" &); ` + setsid
		if rng.IntN(2) == 0 {
			script += "wait"
		}
		a := exec.Command("padrun", "--guard", file, "--", "sh", "-c", script)
		a.Env = append(env, "T="+tag)
		if err := a.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.IntN(30000)) * time.Microsecond) // a random moment, not synchronisation
		a.Process.Signal(syscall.SIGKILL)
		a.Wait()
		if ws := a.ProcessState.Sys().(syscall.WaitStatus); ws.Signaled() {
			killed++
		}
		b := exec.Command("padrun", "--wait", "30s", "--guard", file, "--", "sh", "-c", `echo "n $PAD_SESSION_PID" >> "$F"`)
		b.Env = env
		var stderr bytes.Buffer
		b.Stderr = &stderr
		if err := b.Run(); err != nil {
			t.Fatalf("round %d: the next run did not take the file over: %v\n%s", round, err, stderr.String())
		}
		if left := procsWith(tag); len(left) > 0 {
			t.Fatalf("round %d: the next run took the file over while %v of the killed session still ran", round, left)
		}
	}
	if err := noInterleave(readFile(t, file)); err != nil {
		t.Fatal(err)
	}
	t.Logf("killed padrun %d times in %d rounds", killed, *chaosWriterRounds)
}
