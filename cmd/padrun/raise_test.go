//go:build unix

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// raise dies by the signal itself, with no goroutine dump and no core.
func TestRaise_DiesBySignal_WithoutGoroutineDump(t *testing.T) {
	if os.Getenv("PADRUN_TEST_RAISE") == "QUIT" {
		raise(syscall.SIGQUIT)
		os.Exit(3)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRaise_DiesBySignal_WithoutGoroutineDump$")
	cmd.Env = append(os.Environ(), "PADRUN_TEST_RAISE=QUIT")
	cmd.Dir = t.TempDir()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if err == nil || !ws.Signaled() || ws.Signal() != syscall.SIGQUIT || ws.CoreDump() {
		t.Fatalf("helper ended with %v (%v), want death by QUIT without core", err, fmt.Sprint(ws))
	}
	if strings.Contains(stderr.String(), "goroutine") {
		t.Fatalf("goroutine dump on stderr:\n%s", stderr.String())
	}
}
