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
	"strings"
	"syscall"
	"testing"
	"time"
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
		deadline := time.Now().Add(time.Second)
		for len(procsWith(tag)) > 0 {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: processes of a killed padrun outlive it by a second: %v", round, procsWith(tag))
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
