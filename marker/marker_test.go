//go:build linux

package marker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/padrun/padrun/marker/ident"
	"github.com/padrun/padrun/marker/safefile"
)

var self = ident.ReadSelf()

// reapedPid returns the pid of a process that has exited and been reaped.
func reapedPid(t *testing.T) int {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// zombiePid starts a child and leaves it unreaped once it has exited.
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

// threadID returns the id of a thread of this process that is not its leader.
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
	live := Proc{ID: self.ID}
	with := func(f func(*Proc)) Proc { h := live; f(&h); return h }
	tests := []struct {
		name   string
		holder Proc
		want   ident.Verdict
		reason string
	}{
		{"NoPid_IsUnknown", with(func(h *Proc) { h.Pid = 0 }), ident.Unknown, "no pid"},
		{"OtherMachine_NoHeartbeat_IsUnknown", with(func(h *Proc) { h.MachineID = "other" }), ident.Unknown, "another machine"},
		{"OtherMachine_FreshHeartbeat_IsUnknown", with(func(h *Proc) {
			h.MachineID, h.HeartbeatSeconds, h.Heartbeat = "other", 30, now.Add(-20*time.Second)
		}), ident.Unknown, "heartbeat fresh (20s ago, interval 30s)"},
		{"OtherMachine_StaleHeartbeat_IsDead", with(func(h *Proc) {
			h.MachineID, h.HeartbeatSeconds, h.Heartbeat = "other", 30, now.Add(-91*time.Second)
		}), ident.Dead, "heartbeat silent"},
		{"OtherHost_NoMachineID_IsOtherMachine", with(func(h *Proc) { h.MachineID, h.BootID, h.Hostname = "", "", "elsewhere" }), ident.Unknown, "another machine"},
		{"SameBootID_ProvesSameMachine", with(func(h *Proc) { h.MachineID, h.Hostname = "", "renamed" }), ident.Alive, "start time matches"},
		{"NoMachineTokens_IsThisMachine", with(func(h *Proc) { h.MachineID, h.BootID, h.Hostname = "", "", "" }), ident.Alive, "start time matches"},
		{"PreviousBoot_IsDead", with(func(h *Proc) { h.BootID = "0000" }), ident.Dead, "previous boot"},
		{"BootID_TrailingNewline_IsThisBoot", with(func(h *Proc) { h.BootID += "\n" }), ident.Alive, "start time matches, same boot"},
		{"BootID_UpperCase_IsThisBoot", with(func(h *Proc) { h.BootID = strings.ToUpper(h.BootID) }), ident.Alive, "start time matches, same boot"},
		{"BootID_NoDashes_IsThisBoot", with(func(h *Proc) { h.BootID = strings.ReplaceAll(h.BootID, "-", "") }), ident.Alive, "start time matches, same boot"},
		{"BootID_Spaces_IsThisBoot", with(func(h *Proc) { h.BootID = "  " + strings.ToUpper(h.BootID) + " \t\n" }), ident.Alive, "same boot"},
		{"MachineID_TrailingNewline_IsThisMachine", with(func(h *Proc) { h.MachineID += "\n" }), ident.Alive, "same machine"},
		{"MachineID_UpperCaseWithDashes_IsThisMachine", with(func(h *Proc) { h.MachineID = dashed(strings.ToUpper(h.MachineID)) }), ident.Alive, "same machine"},
		{"MachineID_NoBootID_Normalised_IsThisMachine", with(func(h *Proc) { h.MachineID, h.BootID = strings.ToUpper(h.MachineID)+"\n", "" }), ident.Alive, "same machine"},
		{"OtherPidNamespace_IsUnknown", with(func(h *Proc) { h.PidNamespace = "1" }), ident.Unknown, "another pid namespace"},
		{"OtherPidNamespace_StaleHeartbeat_IsDead", with(func(h *Proc) {
			h.PidNamespace, h.HeartbeatSeconds, h.Heartbeat = "1", 1, now.Add(-time.Minute)
		}), ident.Dead, "heartbeat silent"},
		{"OtherTimeNamespace_ShiftedToken_IsUnknown", with(func(h *Proc) { h.TimeNamespace, h.StartToken = "1", "1" }), ident.Unknown, "another time namespace (1), pid"},
		{"OtherTimeNamespace_PidGone_IsUnknown", with(func(h *Proc) { h.TimeNamespace, h.Pid = "1", reapedPid(t) }), ident.Unknown, "another time namespace"},
		{"OtherTimeNamespace_StaleHeartbeat_IsDead", with(func(h *Proc) {
			h.TimeNamespace, h.HeartbeatSeconds, h.Heartbeat = "1", 1, now.Add(-time.Minute)
		}), ident.Dead, "heartbeat silent"},
		{"NoTimeNamespace_IsThisOne", with(func(h *Proc) { h.TimeNamespace = "" }), ident.Alive, "start time matches"},
		{"PidGone_IsDead", with(func(h *Proc) { h.Pid = reapedPid(t) }), ident.Dead, "is gone"},
		{"StartTokenMatches_IsAlive", live, ident.Alive, "start time matches, same boot"},
		{"PidReused_IsDead", with(func(h *Proc) { h.StartToken = "1" }), ident.Dead, "was reused"},
		{"Zombie_IsDead", with(func(h *Proc) { h.Pid = zombiePid(t); h.StartToken = "1" }), ident.Dead, "zombie"},
		{"NoToken_IsAliveUnverified", with(func(h *Proc) { h.StartToken = "" }), ident.Alive, "unverified"},
		{"NoToken_Zombie_IsDead", with(func(h *Proc) { h.Pid, h.StartToken = zombiePid(t), "" }), ident.Dead, "zombie"},
		{"ThreadID_IsNotAProcess", with(func(h *Proc) { h.Pid, h.StartToken = threadID(t), "" }), ident.Dead, "thread"},
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

// dashed writes a 32-digit id as a UUID, with dashes.
func dashed(id string) string {
	if len(id) != 32 {
		return id
	}
	return id[:8] + "-" + id[8:12] + "-" + id[12:16] + "-" + id[16:20] + "-" + id[20:]
}

func newMarker(file string) Marker {
	m := New(self, file, "0123456789abcdef", time.Now())
	m.Nonce = strconv.FormatInt(time.Now().UnixNano(), 10) + "-nonce"
	return m
}

func TestAcquire_Release_LeavesNothing(t *testing.T) {
	file := filepath.Join(t.TempDir(), "sub", "s.jsonl")
	l, err := TryAcquire(file, newMarker(file), self)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Dir(file))
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("folder created with %v, %v; want 0700", fi.Mode().Perm(), err)
	}
	if _, err := TryAcquire(file, newMarker(file), self); !IsHeld(err) {
		t.Fatalf("second Acquire: %v, want held", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{Path(file), lockPath(file)} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s left behind", p)
		}
	}
}

func TestRelease_KeepsMarkerThatIsNotOurs(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s.jsonl")
	l, err := TryAcquire(file, newMarker(file), self)
	if err != nil {
		t.Fatal(err)
	}
	other := newMarker(file)
	other.Nonce = "someone-else"
	if err := system().write(Path(file), other.encode(), true, time.Now()); err != nil {
		t.Fatal(err)
	}
	l.Release()
	if m, err := Read(file); err != nil || m.Nonce != "someone-else" {
		t.Fatalf("marker of another nonce: %v, %v; want it kept", m, err)
	}
}

// A lock file may be unlinked only while locked; an acquirer that waited on
// the old inode must notice and take the new one (gofrs/flock#8).
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

func TestAcquire_WaitCanceled(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s.jsonl")
	l, err := TryAcquire(file, newMarker(file), self)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	cause := errors.New("the run was aborted")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	if _, err := Acquire(ctx, file, newMarker(file), self); err != cause {
		t.Fatalf("Acquire = %v, want the context's cause", err)
	}
}

// A reader beside a writer never sees a partial marker.
func TestPublish_NeverVisibleHalfWritten(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s.jsonl")
	l, err := TryAcquire(file, newMarker(file), self)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	l.marker.Agent = strings.Repeat("a", 8000) // a marker bigger than one page
	if err := l.SetChild(0, "0", 0, 0); err != nil {
		t.Fatal(err)
	}
	const rounds = 2000
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 1; i <= rounds; i++ {
			if err := l.SetChild(i, strconv.Itoa(i), 0, 0); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	reads := 0
	for {
		select {
		case <-done:
			if reads == 0 {
				t.Fatal("the reader never ran")
			}
			return
		default:
		}
		m, err := Read(file)
		if err != nil {
			t.Fatalf("read %d: %v", reads, err)
		}
		if len(m.Agent) != 8000 || string(m.ChildStartToken) != strconv.Itoa(m.ChildPid) {
			t.Fatalf("read %d: a torn marker", reads)
		}
		reads++
	}
}

func TestRead_Bounded(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s.jsonl")
	big := `{"pid":1,"x":"` + strings.Repeat("x", MaxSize) + `"}`
	if err := os.WriteFile(Path(file), []byte(big), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(file); err == nil || !strings.Contains(err.Error(), "larger than 64 KiB") {
		t.Fatalf("Read of a large marker = %v, want too large", err)
	}
	os.Remove(Path(file))
	if err := syscall.Mkfifo(Path(file), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(file); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("Read of a FIFO = %v, want not regular", err)
	}
}

func TestUnlock_NeverRemovesAlive(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s.jsonl")
	os.WriteFile(Path(file), []byte(`{"tool":"x","pid":`+strconv.Itoa(self.Pid)+`,"startToken":"`+string(self.StartToken)+`"}`), 0o600)
	for _, force := range []bool{false, true} {
		st, err := Unlock(file, self, force)
		if err != nil || st.State != Held {
			t.Fatalf("Unlock(force=%v) = %s, %v; want held", force, st.State, err)
		}
	}
	if _, err := Read(file); err != nil {
		t.Fatalf("alive marker removed: %v", err)
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

// A symlink planted at the temp name is never written through.
func TestPublish_SymlinkAtTempPath_Refused(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "s.jsonl")
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("precious"), 0o600)
	m := newMarker(file)
	e := system()
	e.tempName = func() string { return ".padrun-planted.tmp" }
	os.Symlink(target, filepath.Join(dir, ".padrun-planted.tmp"))
	if err := e.write(Path(file), m.encode(), false, time.Now()); err == nil {
		t.Fatal("published through a symlink at the temp path")
	}
	if b, _ := os.ReadFile(target); string(b) != "precious" {
		t.Fatalf("the symlink's target was written: %q", b)
	}
}

// noFlock stands in a filesystem without flock.
func noFlock() env {
	e := system()
	e.tryLock = func(safefile.Handle) error { return safefile.ErrNoLocking }
	return e
}

// tryAcquire is TryAcquire in e.
func (e env) tryAcquire(file string, m Marker, self ident.Self) (*Hold, error) {
	return e.acquire(context.Background(), file, m, self, false)
}

func TestNoFlock_MarkerAndBreakFileSerialise(t *testing.T) {
	e := noFlock()
	file := filepath.Join(t.TempDir(), "s.jsonl")
	l, err := e.tryAcquire(file, newMarker(file), self)
	if err != nil || !l.NoFlock {
		t.Fatalf("Acquire = %v, %v; want a lock held by its marker alone", l, err)
	}
	if _, err := os.Lstat(breakPath(file)); !os.IsNotExist(err) {
		t.Fatal("the break file outlived the takeover")
	}
	// A second taker: our padrun is alive, so its marker refuses.
	if _, err := e.tryAcquire(file, newMarker(file), self); !IsHeld(err) {
		t.Fatalf("second Acquire = %v, want held", err)
	}
	// A takeover under way (a live taker's break file) refuses, waitable.
	os.WriteFile(breakPath(file), []byte(`{"pid":`+strconv.Itoa(self.Pid)+`,"startToken":"`+string(self.StartToken)+`"}`), 0o600)
	var held *HeldError
	if _, err := e.tryAcquire(file, newMarker(file), self); !errors.As(err, &held) || !held.Kind.Waitable() {
		t.Fatalf("Acquire beside a live break file = %v, want a waitable refusal", err)
	}
	os.Remove(breakPath(file))
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(lockPath(file)); err != nil {
		t.Fatal("the lock file was unlinked without a lock")
	}
	if _, err := os.Lstat(Path(file)); !os.IsNotExist(err) {
		t.Fatal("the marker outlived its release")
	}
}

func TestNoFlock_DeadTakerBreakFile_IsCleared(t *testing.T) {
	e := noFlock()
	file := filepath.Join(t.TempDir(), "s.jsonl")
	os.WriteFile(breakPath(file), []byte(`{"pid":`+strconv.Itoa(reapedPid(t))+`,"startToken":"1"}`), 0o600)
	l, err := e.tryAcquire(file, newMarker(file), self)
	if err != nil {
		t.Fatalf("Acquire past a dead taker's break file = %v", err)
	}
	l.Release()
}

// TestClearBreak_OnlyWhatWasJudged: of two takers that judged one dead
// break file, the later must not remove the file the first made since; a
// taker removes its own, even beside a clearer at work; clearers take
// turns, and a dead clearer's turn ends.
func TestClearBreak_OnlyWhatWasJudged(t *testing.T) {
	dir := t.TempDir()
	brk := breakPath(filepath.Join(dir, "s.jsonl"))
	dead := []byte(`{"pid":` + strconv.Itoa(reapedPid(t)) + `,"startToken":"1"}`)
	live := []byte(`{"pid":` + strconv.Itoa(self.Pid) + `,"startToken":"` + string(self.StartToken) + `"}`)
	empty := func(when string) {
		t.Helper()
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Fatalf("%s, left behind: %v", when, ents)
		}
	}
	os.WriteFile(brk, dead, 0o600)
	system().clearDeadBreak(brk, dead) // the first taker clears the dead file
	if _, err := os.Lstat(brk); !os.IsNotExist(err) {
		t.Fatal("the dead taker's break file is still there")
	}
	os.WriteFile(brk, live, 0o600)     // and makes its own
	system().clearDeadBreak(brk, dead) // the second, late, clears what it judged
	if b, err := os.ReadFile(brk); err != nil || !bytes.Equal(b, live) {
		t.Fatalf("the live taker's break file is %q, %v; want it kept", b, err)
	}
	dropBreak(brk, dead) // nor does a taker drop another's
	if _, err := os.Lstat(brk); err != nil {
		t.Fatal("a taker dropped another's break file")
	}
	dropBreak(brk, live) // the live taker ends its takeover
	empty("after a takeover")

	// Another clearer at work (a fresh .clear file): waited for, briefly,
	// and nothing removed; a taker still drops its own; a dead clearer's
	// (an old .clear file) is taken aside.
	os.WriteFile(brk, dead, 0o600)
	os.WriteFile(brk+".clear", []byte("another"), 0o600)
	system().clearDeadBreak(brk, dead)
	if _, err := os.Lstat(brk); err != nil {
		t.Fatal("the break file was removed beside another clearer")
	}
	os.WriteFile(brk, live, 0o600)
	dropBreak(brk, live)
	if _, err := os.Lstat(brk); !os.IsNotExist(err) {
		t.Fatal("a taker's own break file stayed beside a clearer at work")
	}
	os.WriteFile(brk, dead, 0o600)
	old := time.Now().Add(-2 * clearLease)
	os.Chtimes(brk+".clear", old, old)
	system().clearDeadBreak(brk, dead)
	empty("past a dead clearer")

	// A break file whose name leaves no room for .clear is still cleared.
	long := breakPath(filepath.Join(dir, strings.Repeat("x", 255-len(breakPath("")))))
	os.WriteFile(long, dead, 0o600)
	system().clearDeadBreak(long, dead)
	empty("with a 255-character name")
}

func TestNoFlock_DeadPadrunMarker_TakenOver(t *testing.T) {
	e := noFlock()
	file := filepath.Join(t.TempDir(), "s.jsonl")
	os.WriteFile(Path(file), []byte(`{"tool":"padrun","pid":`+strconv.Itoa(reapedPid(t))+`,"startToken":"1"}`), 0o600)
	l, err := e.tryAcquire(file, newMarker(file), self)
	if err != nil {
		t.Fatalf("Acquire over a dead padrun's marker = %v", err)
	}
	l.Release()
}

// The temp name does not grow with the session file's name, so it fits
// NAME_MAX whenever the marker's name does, and never looks like a marker.
func TestTempName_FitsWhereTheMarkerFits(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		n := system().tempName()
		if len(n) > 64 || strings.HasSuffix(n, ".live.json") || seen[n] { // its writer's pid and start token included
			t.Fatalf("temp name %q: %d bytes, or a marker's name, or not fresh", n, len(n))
		}
		seen[n] = true
	}
	file := filepath.Join(t.TempDir(), strings.Repeat("x", 255-len(".live.json")))
	l, err := TryAcquire(file, newMarker(file), self)
	if err != nil {
		t.Fatalf("a session file whose marker name is 255 bytes: %v", err)
	}
	l.Release()
}

// Release knows its own marker by the bytes it last wrote, rewrites
// included, and a marker re-encoded by another tool by its nonce.
func TestRelease_RemovesOwnMarker_ByBytesOrNonce(t *testing.T) {
	for _, rewrite := range []string{"", "SetChild", "reformatted"} {
		file := filepath.Join(t.TempDir(), "s.jsonl")
		l, err := TryAcquire(file, newMarker(file), self)
		if err != nil {
			t.Fatal(err)
		}
		switch rewrite {
		case "SetChild":
			if err := l.SetChild(self.Pid, string(self.StartToken), 0, 0); err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(Path(file)); !strings.Contains(string(b), `"childPid"`) || !bytes.Equal(b, l.written) {
				t.Fatalf("rewritten marker %s, want the bytes the lock last wrote", b)
			}
		case "reformatted":
			b, _ := json.MarshalIndent(l.marker, "", " ")
			if err := os.WriteFile(Path(file), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := l.Touch(time.Now()); err != nil {
			t.Fatalf("%s: heartbeat of our own marker: %v", rewrite, err)
		}
		if err := l.Release(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Lstat(Path(file)); !os.IsNotExist(err) {
			t.Errorf("%s: our marker left behind", rewrite)
		}
	}
}

// status --json writes the verdict where the ladder gave one: never for a
// free file, "unknown" where the reason is all padrun could learn.
func TestStatus_JSONVerdict(t *testing.T) {
	for _, tc := range []struct {
		st   Status
		want string
	}{
		{Status{File: "/f", State: Free}, ""},
		{Status{File: "/f", State: Held, Verdict: ident.Alive, Reason: "pid 1 start time matches"}, `"verdict":"alive"`},
		{Status{File: "/f", State: Stale, Verdict: ident.Dead, Reason: "pid 1 is gone"}, `"verdict":"dead"`},
		{Status{File: "/f", State: Unknown, Reason: "/proc/locks: permission denied"}, `"verdict":"unknown"`},
	} {
		b, err := json.Marshal(tc.st)
		if err != nil {
			t.Fatal(err)
		}
		got := string(b)
		if tc.want == "" && strings.Contains(got, `"verdict"`) || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%s: %s, want verdict %q", tc.st.State, got, tc.want)
		}
		if !strings.Contains(got, `"state":"`+string(tc.st.State)+`"`) {
			t.Errorf("%s: %s lacks its state", tc.st.State, got)
		}
	}
}
