package marker

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/padrun/padrun/marker/ident"
	"github.com/padrun/padrun/marker/safefile"
)

// localFlock stands in a filesystem whose flock reaches only this machine.
func localFlock() env {
	e := system()
	e.scope = func(safefile.Handle) (bool, string) { return true, "fuse.test" }
	return e
}

// remoteHost is a holder on another machine, for markers and break files.
var remoteHost = ident.Self{ID: ident.ID{Pid: 4242, StartToken: "1", BootID: "0b0b", MachineID: "0c0c", Hostname: "elsewhere"}}

// writeRemoteMarker writes a padrun marker of another machine whose last
// heartbeat (interval 1s) was at hb.
func writeRemoteMarker(t *testing.T, file string, hb time.Time) {
	m := New(remoteHost, file, "remote-nonce", hb)
	m.HeartbeatSeconds = 1
	b, _ := json.Marshal(m)
	if err := os.WriteFile(Path(file), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(Path(file), hb, hb); err != nil {
		t.Fatal(err)
	}
}

func TestLocalFlock_OtherMachineHeartbeat_RefusesUntilThreeIntervals(t *testing.T) {
	e := localFlock()
	file := filepath.Join(t.TempDir(), "s.jsonl")
	writeRemoteMarker(t, file, time.Now().Add(-2500*time.Millisecond))
	var held *HeldError
	if _, err := e.tryAcquire(file, newMarker(file), self); !errors.As(err, &held) || !held.Kind.Waitable() ||
		!strings.Contains(held.Judgement.Reason, "another machine") || !strings.Contains(held.Judgement.Reason, "heartbeat fresh") {
		t.Fatalf("Acquire beside a fresh heartbeat = %v, want a waitable refusal", err)
	}
	writeRemoteMarker(t, file, time.Now().Add(-3100*time.Millisecond))
	l, err := e.tryAcquire(file, newMarker(file), self)
	if err != nil || l.LocalFlock != "fuse.test" || l.NoFlock {
		t.Fatalf("Acquire over a silent heartbeat = %+v, %v; want a local flock", l, err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{Path(file), breakPath(file)} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s outlived the release", p)
		}
	}
	if _, err := os.Lstat(lockPath(file)); err != nil {
		t.Error("the lock file, which other machines open too, was unlinked")
	}
}

// The flock of this machine is free, yet a taker on another machine holds
// the break file: the takeover must wait for it.
func TestLocalFlock_BreakFileOfAnotherMachine_Refuses(t *testing.T) {
	e := localFlock()
	file := filepath.Join(t.TempDir(), "s.jsonl")
	writeRemoteMarker(t, file, time.Now().Add(-time.Hour))
	writeBreak(t, file, remoteHost, time.Now())
	var held *HeldError
	if _, err := e.tryAcquire(file, newMarker(file), self); !errors.As(err, &held) || !held.Kind.Waitable() ||
		!strings.Contains(held.Judgement.Reason, "taking the file over") {
		t.Fatalf("Acquire beside another machine's break file = %v, want a waitable refusal", err)
	}
	if m, err := Read(file); err != nil || m.Nonce != "remote-nonce" {
		t.Fatalf("the marker was replaced under another taker's break file: %+v, %v", m, err)
	}
}

// A break file of another machine cannot be probed by pid: only its age,
// three leases, proves its taker dead.
func TestBreak_OtherMachine_DeadOnlyAfterThreeLeases(t *testing.T) {
	e := noFlock()
	file := filepath.Join(t.TempDir(), "s.jsonl")
	lease := breakLeaseSeconds * time.Second
	writeBreak(t, file, remoteHost, time.Now().Add(-3*lease+2*time.Second))
	if _, err := e.tryAcquire(file, newMarker(file), self); !IsHeld(err) {
		t.Fatalf("Acquire beside a young break file of another machine = %v, want held", err)
	}
	writeBreak(t, file, remoteHost, time.Now().Add(-3*lease-time.Second))
	l, err := e.tryAcquire(file, newMarker(file), self)
	if err != nil {
		t.Fatalf("Acquire past an expired break file of another machine = %v", err)
	}
	l.Release()
}

func writeBreak(t *testing.T, file string, who ident.Self, mtime time.Time) {
	b, _ := json.Marshal(ident.ID{Pid: who.Pid, StartToken: who.StartToken, BootID: who.BootID, MachineID: who.MachineID, Hostname: who.Hostname})
	os.Remove(breakPath(file))
	if err := os.WriteFile(breakPath(file), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(breakPath(file), mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

// The marker's first heartbeat is the time of the judgement that let it in.
func TestPublish_StampsTheJudgementTime(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s.jsonl")
	at := time.Date(2026, 11, 30, 8, 0, 0, 123456789, time.UTC)
	if err := system().write(Path(file), newMarker(file).encode(), false, at); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(Path(file))
	if err != nil || !fi.ModTime().Equal(at) {
		t.Fatalf("marker mtime = %v, %v; want %v", fi.ModTime(), err, at)
	}
}

// unlock judges and removes a stale marker under the break file where the
// flock stays on this machine: a taker on another machine may be
// publishing its own marker meanwhile.
func TestLocalFlock_Unlock_WaitsForTheBreakFile(t *testing.T) {
	e := localFlock()
	file := filepath.Join(t.TempDir(), "s.jsonl")
	writeRemoteMarker(t, file, time.Now().Add(-time.Hour))
	writeBreak(t, file, remoteHost, time.Now())
	if st, err := e.unlock(file, self, false); err != nil || st.State != Unknown || !strings.Contains(st.Reason, "taking the file over") {
		t.Fatalf("Unlock beside another machine's break file = %+v, %v; want the marker kept", st, err)
	}
	if _, err := os.Lstat(Path(file)); err != nil {
		t.Fatal("the marker was removed under another taker's break file")
	}
	os.Remove(breakPath(file))
	st, err := e.unlock(file, self, false)
	if err != nil || st.State != Free || st.LocalFlock != "fuse.test" {
		t.Fatalf("Unlock of a stale marker = %+v, %v; want free, on fuse.test", st, err)
	}
	if _, err := os.Lstat(Path(file)); !os.IsNotExist(err) {
		t.Fatal("the stale marker was kept")
	}
	if _, err := os.Lstat(lockPath(file)); err != nil {
		t.Error("the lock file, which other machines open too, was unlinked")
	}
}

// The heartbeat touches only our own marker: once another session has
// taken the file over (our heartbeat looked silent), it is lost.
func TestTouch_MarkerReplacedOrRemoved_IsLost(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s.jsonl")
	l, err := TryAcquire(file, newMarker(file), self)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	beat := time.Now().Add(-time.Minute).Truncate(time.Microsecond)
	if err := l.Touch(beat); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(Path(file)); !fi.ModTime().Equal(beat) {
		t.Fatalf("heartbeat mtime = %v, want %v", fi.ModTime(), beat)
	}
	writeRemoteMarker(t, file, beat)
	var lost *LostError
	if err := l.Touch(time.Now()); !errors.As(err, &lost) {
		t.Fatalf("Touch of another's marker = %v, want lost", err)
	}
	if fi, _ := os.Stat(Path(file)); !fi.ModTime().Equal(beat) {
		t.Fatal("the heartbeat refreshed the marker of the session that took the file over")
	}
	os.Remove(Path(file))
	if err := l.Touch(time.Now()); !errors.As(err, &lost) {
		t.Fatalf("Touch of a removed marker = %v, want lost", err)
	}
}
