package marker

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/padrun/padrun/marker/ident"
)

func zombiePid(t *testing.T) int {
	pid, err := syscall.ForkExec("/bin/true", []string{"true"}, &syscall.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Wait4(pid, nil, 0, nil) })
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if s := string(b); strings.Contains(s[strings.LastIndex(s, ")")+1:], " Z ") {
			return pid
		}
	}
	t.Fatal("child never became a zombie")
	return 0
}

func threadID(t *testing.T) int {
	des, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		if tid, _ := strconv.Atoi(de.Name()); tid != os.Getpid() {
			return tid
		}
	}
	t.Skip("no second thread")
	return 0
}

func TestVerdictLadder(t *testing.T) {
	now := time.Now()
	live := proc{ID: self.ID}
	with := func(f func(*proc)) proc { h := live; f(&h); return h }
	tests := []struct {
		name   string
		holder proc
		want   ident.Verdict
		reason string
	}{
		{"NoPid_IsUnknown", with(func(h *proc) { h.Pid = 0 }), ident.Unknown, "no pid"},
		{"OtherMachine_NoHeartbeat_IsUnknown", with(func(h *proc) { h.MachineID = "other" }), ident.Unknown, "another machine"},
		{"OtherMachine_FreshHeartbeat_IsUnknown", with(func(h *proc) {
			h.MachineID, h.HeartbeatSeconds, h.Heartbeat = "other", 30, now.Add(-20*time.Second)
		}), ident.Unknown, "heartbeat fresh (20s ago, interval 30s)"},
		{"OtherMachine_StaleHeartbeat_IsDead", with(func(h *proc) {
			h.MachineID, h.HeartbeatSeconds, h.Heartbeat = "other", 30, now.Add(-91*time.Second)
		}), ident.Dead, "heartbeat silent"},
		{"OtherHost_NoMachineID_IsOtherMachine", with(func(h *proc) { h.MachineID, h.BootID, h.Hostname = "", "", "elsewhere" }), ident.Unknown, "another machine"},
		{"SameBootID_ProvesSameMachine", with(func(h *proc) { h.MachineID, h.Hostname = "", "renamed" }), ident.Alive, "start time matches"},
		{"NoMachineTokens_IsThisMachine", with(func(h *proc) { h.MachineID, h.BootID, h.Hostname = "", "", "" }), ident.Alive, "start time matches"},
		{"PreviousBoot_IsDead", with(func(h *proc) { h.BootID = "0000" }), ident.Dead, "previous boot"},
		{"BootID_TrailingNewline_IsThisBoot", with(func(h *proc) { h.BootID += "\n" }), ident.Alive, "start time matches, same boot"},
		{"BootID_UpperCase_IsThisBoot", with(func(h *proc) { h.BootID = strings.ToUpper(h.BootID) }), ident.Alive, "start time matches, same boot"},
		{"BootID_NoDashes_IsThisBoot", with(func(h *proc) { h.BootID = strings.ReplaceAll(h.BootID, "-", "") }), ident.Alive, "start time matches, same boot"},
		{"BootID_Spaces_IsThisBoot", with(func(h *proc) { h.BootID = "  " + strings.ToUpper(h.BootID) + " \t\n" }), ident.Alive, "same boot"},
		{"MachineID_TrailingNewline_IsThisMachine", with(func(h *proc) { h.MachineID += "\n" }), ident.Alive, "same machine"},
		{"MachineID_UpperCaseWithDashes_IsThisMachine", with(func(h *proc) { h.MachineID = dashed(strings.ToUpper(h.MachineID)) }), ident.Alive, "same machine"},
		{"MachineID_NoBootID_Normalised_IsThisMachine", with(func(h *proc) { h.MachineID, h.BootID = strings.ToUpper(h.MachineID)+"\n", "" }), ident.Alive, "same machine"},
		{"OtherPidNamespace_IsUnknown", with(func(h *proc) { h.PidNamespace = "1" }), ident.Unknown, "another pid namespace"},
		{"OtherPidNamespace_StaleHeartbeat_IsDead", with(func(h *proc) {
			h.PidNamespace, h.HeartbeatSeconds, h.Heartbeat = "1", 1, now.Add(-time.Minute)
		}), ident.Dead, "heartbeat silent"},
		{"OtherTimeNamespace_ShiftedToken_IsUnknown", with(func(h *proc) { h.TimeNamespace, h.StartToken = "1", "1" }), ident.Unknown, "another time namespace (1), pid"},
		{"OtherTimeNamespace_PidGone_IsUnknown", with(func(h *proc) { h.TimeNamespace, h.Pid = "1", reapedPid(t) }), ident.Unknown, "another time namespace"},
		{"OtherTimeNamespace_StaleHeartbeat_IsDead", with(func(h *proc) {
			h.TimeNamespace, h.HeartbeatSeconds, h.Heartbeat = "1", 1, now.Add(-time.Minute)
		}), ident.Dead, "heartbeat silent"},
		{"NoTimeNamespace_IsThisOne", with(func(h *proc) { h.TimeNamespace = "" }), ident.Alive, "start time matches"},
		{"PidGone_IsDead", with(func(h *proc) { h.Pid = reapedPid(t) }), ident.Dead, "is gone"},
		{"StartTokenMatches_IsAlive", live, ident.Alive, "start time matches, same boot"},
		{"PidReused_IsDead", with(func(h *proc) { h.StartToken = "1" }), ident.Dead, "was reused"},
		{"Zombie_IsDead", with(func(h *proc) { h.Pid = zombiePid(t); h.StartToken = "1" }), ident.Dead, "zombie"},
		{"NoToken_IsAliveUnverified", with(func(h *proc) { h.StartToken = "" }), ident.Alive, "unverified"},
		{"NoToken_Zombie_IsDead", with(func(h *proc) { h.Pid, h.StartToken = zombiePid(t), "" }), ident.Dead, "zombie"},
		{"ThreadID_IsNotAProcess", with(func(h *proc) { h.Pid, h.StartToken = threadID(t), "" }), ident.Dead, "thread"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := verdictOf(tt.holder, self, now)
			if j.Verdict != tt.want || !strings.Contains(j.Reason, tt.reason) {
				t.Fatalf("verdictOf = %s, want %s with %q", j, tt.want, tt.reason)
			}
		})
	}
}

func TestAcquire_LockFileUnlinkedWhileWaiting_TakesNewInode(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s.jsonl")
	first, err := TryAcquire(file, newMarker(file), self)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *Hold)
	go func() {
		l, err := Acquire(context.Background(), file, newMarker(file), self)
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	// Let the waiter block on the old inode, then release (unlink + close).
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if b, _ := os.ReadFile("/proc/locks"); strings.Contains(string(b), "->") {
			break
		}
	}
	first.Release() // unlinks the lock file: the waiter must take the new one

	second := <-got
	defer second.Release()
	var a, b syscall.Stat_t
	if err := syscall.Fstat(second.g.h, &a); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Stat(lockPath(file), &b); err != nil || a.Ino != b.Ino {
		t.Fatalf("the waiter holds inode %d, the path names %d (%v)", a.Ino, b.Ino, err)
	}
	if _, err := TryAcquire(file, newMarker(file), self); !IsHeld(err) {
		t.Fatalf("third Acquire: %v, want held", err)
	}
}

func TestInspect_NeverTakesTheLock(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s.jsonl")
	l, err := TryAcquire(file, newMarker(file), self)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if st := Inspect(file, self, time.Now()); st.State != Held || st.LockPid != self.Pid {
		t.Fatalf("Inspect = %+v, want held by our pid", st)
	}
}

func dashed(id string) string {
	if len(id) != 32 {
		return id
	}
	return id[:8] + "-" + id[8:12] + "-" + id[12:16] + "-" + id[16:20] + "-" + id[20:]
}
