package supervise

import (
	"os"
	"os/exec"
	"slices"
	"testing"
)

func TestDescendants_FindsAChild(t *testing.T) {
	s, readyFile := helper(t, "hang")
	cmd := exec.Command(s.Path, s.Args[1:]...)
	cmd.Env = s.Env
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	waitReady(t, readyFile)
	if got := descendants(os.Getpid()); !slices.Contains(got, cmd.Process.Pid) {
		t.Fatalf("descendants = %v, want %d among them", got, cmd.Process.Pid)
	}
}
