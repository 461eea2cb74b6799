package marker

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/padrun/padrun/marker/cgroupdir"
)

// deadPadrunMarker writes a padrun marker whose padrun and child are gone,
// with extra JSON fields, and returns the session file.
func deadPadrunMarker(t *testing.T, extra string) string {
	file := filepath.Join(t.TempDir(), "s.jsonl")
	m := `{"tool":"padrun","pid":` + strconv.Itoa(reapedPid(t)) + `,"startToken":"1","childPid":` + strconv.Itoa(reapedPid(t)) +
		`,"bootId":"` + self.BootID + `","pidNamespace":"` + string(self.PidNamespace) + `"` + extra + `}`
	if err := os.WriteFile(Path(file), []byte(m), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// groupLeader starts a process leading its own group, as padrun's child
// does, and ends it at cleanup.
func groupLeader(t *testing.T) *exec.Cmd {
	cmd := exec.Command("sleep", "1000")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd
}

// A dead padrun whose child's process group still has a process: refused,
// naming it; once it is gone, taken over.
func TestTakeover_OrphanInChildsGroup_Refused(t *testing.T) {
	cmd := groupLeader(t)
	file := deadPadrunMarker(t, `,"childPgid":`+strconv.Itoa(cmd.Process.Pid))
	_, err := TryAcquire(file, newMarker(file), self)
	var he *HeldError
	if !asHeld(err, &he) || !he.Kind.Waitable() || !strings.Contains(he.Judgement.Reason, "pid "+strconv.Itoa(cmd.Process.Pid)+" (sleep)") {
		t.Fatalf("Acquire = %v, want a waitable refusal naming pid %d (sleep)", err, cmd.Process.Pid)
	}
	cmd.Process.Kill()
	cmd.Wait()
	l, err := TryAcquire(file, newMarker(file), self)
	if err != nil {
		t.Fatalf("Acquire once the group is empty = %v", err)
	}
	l.Release()
}

// The same through the child's session (with --pty the child leads one).
func TestTakeover_OrphanInChildsSession_Refused(t *testing.T) {
	cmd := exec.Command("sleep", "1000")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	file := deadPadrunMarker(t, `,"childSid":`+strconv.Itoa(cmd.Process.Pid))
	if _, err := TryAcquire(file, newMarker(file), self); !IsHeld(err) {
		t.Fatalf("Acquire = %v, want held", err)
	}
}

// A process of that group that started before the padrun cannot be its
// session's: a reused group id does not hold the file.
func TestTakeover_GroupProcessOlderThanPadrun_NotCounted(t *testing.T) {
	cmd := groupLeader(t)
	file := deadPadrunMarker(t, `,"childPgid":`+strconv.Itoa(cmd.Process.Pid))
	b, _ := os.ReadFile(Path(file))
	b = []byte(strings.Replace(string(b), `"startToken":"1"`, `"startToken":"99999999999"`, 1))
	os.WriteFile(Path(file), b, 0o600)
	l, err := TryAcquire(file, newMarker(file), self)
	if err != nil {
		t.Fatalf("Acquire = %v, want taken over", err)
	}
	l.Release()
}

// A padrun of another time namespace read its start tokens shifted by that
// namespace's boottime offset: a live process whose token differs from the
// one recorded is not proven reused. Refused as unknown, never taken over.
func TestTakeover_OtherTimeNamespace_ShiftedToken_Unknown(t *testing.T) {
	cmd := groupLeader(t)
	file := filepath.Join(t.TempDir(), "s.jsonl")
	m := `{"tool":"padrun","pid":` + strconv.Itoa(cmd.Process.Pid) + `,"startToken":"99999999999","childPid":` + strconv.Itoa(reapedPid(t)) +
		`,"bootId":"` + self.BootID + `","pidNamespace":"` + string(self.PidNamespace) + `","timeNamespace":"1"}`
	if err := os.WriteFile(Path(file), []byte(m), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := TryAcquire(file, newMarker(file), self)
	var he *HeldError
	if !asHeld(err, &he) || he.Judgement.Verdict.String() != "unknown" || !strings.Contains(he.Judgement.Reason, "another time namespace (1)") {
		t.Fatalf("Acquire = %v, want an unknown refusal naming another time namespace", err)
	}
}

// Once its heartbeat is silent, its child's group is still searched, but
// with no start-time floor: the recorded one is shifted.
func TestTakeover_OtherTimeNamespace_GroupHasNoFloor(t *testing.T) {
	cmd := groupLeader(t)
	file := deadPadrunMarker(t, `,"timeNamespace":"1","heartbeatSeconds":1,"childPgid":`+strconv.Itoa(cmd.Process.Pid))
	b, _ := os.ReadFile(Path(file))
	os.WriteFile(Path(file), []byte(strings.Replace(string(b), `"startToken":"1"`, `"startToken":"99999999999"`, 1)), 0o600)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(Path(file), old, old)
	_, err := TryAcquire(file, newMarker(file), self)
	var he *HeldError
	if !asHeld(err, &he) || !strings.Contains(he.Judgement.Reason, "pid "+strconv.Itoa(cmd.Process.Pid)+" (sleep)") {
		t.Fatalf("Acquire = %v, want a refusal naming pid %d (sleep)", err, cmd.Process.Pid)
	}
}

// A recorded cgroup that is not a cgroup v2 folder proves nothing: refused
// as unknown, never taken over.
func TestTakeover_UnreadableCgroup_FailsClosed(t *testing.T) {
	dir := t.TempDir()
	file := deadPadrunMarker(t, `,"cgroup":"`+dir+`"`)
	_, err := TryAcquire(file, newMarker(file), self)
	var he *HeldError
	if !asHeld(err, &he) || he.Judgement.Verdict.String() != "unknown" {
		t.Fatalf("Acquire = %v, want an unknown refusal", err)
	}
}

// A recorded cgroup that no longer exists: the group check decides.
func TestTakeover_CgroupGone_FallsBackToGroup(t *testing.T) {
	cmd := groupLeader(t)
	file := deadPadrunMarker(t, `,"cgroup":"/sys/fs/cgroup/padrun-gone-0","childPgid":`+strconv.Itoa(cmd.Process.Pid))
	if _, err := TryAcquire(file, newMarker(file), self); !IsHeld(err) {
		t.Fatalf("Acquire = %v, want held", err)
	}
}

func asHeld(err error, he **HeldError) bool {
	e, ok := err.(*HeldError)
	*he = e
	return ok
}

// Keep drops the lock but leaves the marker, so that the next acquirer's
// orphan check judges the session instead of finding a free file.
func TestKeep_LeavesTheMarker(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s.jsonl")
	l, err := TryAcquire(file, newMarker(file), self)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Keep(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(Path(file)); err != nil {
		t.Fatalf("marker gone after Keep: %v", err)
	}
	// Its writer (this process) is alive: the file is still refused.
	if _, err := TryAcquire(file, newMarker(file), self); !IsHeld(err) {
		t.Fatalf("Acquire after Keep = %v, want held", err)
	}
}

// emptyCgroup makes an empty cgroup named as padrun names them, or skips
// where no cgroup v2 folder can be made (not root, no delegated subtree).
func emptyCgroup(t *testing.T) string {
	for _, root := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
		dir := filepath.Join(root, "padrun-test-"+strconv.Itoa(os.Getpid())+"-"+strconv.FormatInt(time.Now().UnixNano(), 36))
		if os.Mkdir(dir, 0o755) == nil {
			if !cgroupdir.IsV2(dir) {
				syscall.Rmdir(dir)
				continue
			}
			t.Cleanup(func() { syscall.Rmdir(dir) })
			return dir
		}
	}
	t.Skip("no cgroup v2 folder can be made here (needs root or a delegated subtree)")
	return ""
}

// A look changes nothing: Inspect judges a dead session's empty cgroup but
// leaves it; the acquire that replaces its marker removes it.
func TestInspect_LeavesTheEmptyCgroup_AcquireRemovesIt(t *testing.T) {
	cg := emptyCgroup(t)
	file := deadPadrunMarker(t, `,"cgroup":"`+cg+`"`)
	if st := Inspect(file, self, time.Now()); st.State != Stale {
		t.Fatalf("Inspect = %+v, want stale", st)
	}
	if _, err := os.Stat(cg); err != nil {
		t.Fatalf("Inspect removed the cgroup: %v", err)
	}
	l, err := TryAcquire(file, newMarker(file), self)
	if err != nil {
		t.Fatal(err)
	}
	l.Release()
	if _, err := os.Stat(cg); !os.IsNotExist(err) {
		t.Fatalf("the dead session's empty cgroup outlived the takeover: %v", err)
	}
}
