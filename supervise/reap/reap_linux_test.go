package reap

import (
	"os/exec"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestLeft: with no child at all nothing is left (the cheap answer, from
// waitid's ECHILD); a live orphan is left; a dead one is reaped and is
// not; padrun's own child is never counted, nor reaped.
func TestLeft(t *testing.T) {
	if Left() {
		t.Fatal("no child at all, and Left says one is left")
	}
	pid, err := syscall.ForkExec("/bin/sleep", []string{"sleep", "30"}, &syscall.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	if !Left() {
		t.Fatal("a live child that is not padrun's own is not counted")
	}
	if err := unix.Kill(pid, unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var info unix.Siginfo // its exit, left for Left to reap
	if err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil); err != nil {
		t.Fatal(err)
	}
	if Left() {
		t.Fatal("a dead child is counted as left")
	}
	if _, err := unix.Wait4(pid, nil, unix.WNOHANG, nil); err != unix.ECHILD {
		t.Fatalf("the dead child was not reaped: wait4 says %v", err)
	}

	own := exec.Command("/bin/sleep", "30")
	if err := Start(own); err != nil {
		t.Fatal(err)
	}
	defer Wait(own)
	if Left() {
		t.Error("padrun's own child is counted as left")
	}
	own.Process.Kill()
	if err := unix.Waitid(unix.P_PID, own.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil); err != nil {
		t.Fatal(err)
	}
	if Left() {
		t.Error("padrun's own dead child is counted as left")
	}
	if !Own(own.Process.Pid) {
		t.Error("padrun's own dead child was reaped: its Wait would fail")
	}
}
