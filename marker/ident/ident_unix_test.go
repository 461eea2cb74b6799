//go:build unix

package ident

import (
	"os/exec"
	"testing"
)

func TestProbe_DeadPid_IsDead(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if f, _ := Probe(cmd.Process.Pid, ""); f.Verdict != Dead || f.Fact != Gone {
		t.Fatalf("reaped pid: %+v, want dead, gone", f)
	}
}
