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
	if v, why := Probe(cmd.Process.Pid, ""); v != Dead {
		t.Fatalf("reaped pid: %s (%s), want dead", v, why)
	}
}
