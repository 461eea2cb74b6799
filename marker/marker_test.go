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
