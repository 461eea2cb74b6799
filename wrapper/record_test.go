//go:build linux

package wrapper

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/padrun/padrun/marker/safefile"
	"github.com/padrun/padrun/registry"
	"github.com/padrun/padrun/wrapper/control"
)

// TestWriteChild_NeverWaitsForTheRegistry: while another process holds the
// registry's lock, the child's record is tried again later, backing off,
// and the supervisor is never kept waiting (it forwards signals between
// tries); once the lock is free the record gets the child.
func TestWriteChild_NeverWaitsForTheRegistry(t *testing.T) {
	s, _ := testSession(t, t.TempDir())
	var logs bytes.Buffer
	s.o.Log = zerolog.New(&logs)
	s.reg.OnWait = func(string) { t.Fatal("writeChild waits for the registry's lock") }
	h, err := safefile.OpenLock(filepath.Join(s.reg.Dir, ".lock")) // a description of its own: another holder
	if err != nil {
		t.Fatal(err)
	}
	if err := safefile.TryLock(h); err != nil {
		t.Fatal(err)
	}
	child := childInfo{pid: os.Getpid()}
	var w childWrite
	now := time.Now()
	for i, want := range []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond} {
		if got := s.writeChild(child, now, &w); got != want {
			t.Fatalf("try %d, the lock held: again in %v, want %v", i+1, got, want)
		}
	}
	if got := s.writeChild(child, now.Add(registry.LockWait), &w); got <= 0 || !strings.Contains(logs.String(), "the registry's lock is held") {
		t.Fatalf("held for LockWait: again in %v, logs %q; want a retry, and people told", got, logs.String())
	}
	path := s.reg.Path(s.rec.SessionPID)
	if b, _ := os.ReadFile(path); bytes.Contains(b, []byte(`"child_pid"`)) {
		t.Fatal("the record was written under another's lock")
	}
	safefile.Close(h)
	if got := s.writeChild(child, now.Add(2*registry.LockWait), &w); got != 0 {
		t.Fatalf("the lock free: again in %v, want done", got)
	}
	if b, _ := os.ReadFile(path); !bytes.Contains(b, []byte(`"child_pid": `+strconv.Itoa(child.pid))) {
		t.Fatalf("the record lacks the child: %s", b)
	}
}

// TestJobs_NeverWaitForAClaim: a claim writes the record once it has let
// the session go, and may wait for the registry's lock meanwhile: the
// supervisor's jobs go on meanwhile, the child's record tried again later,
// and once the lock is free the record has both the claimed file and the
// child.
func TestJobs_NeverWaitForAClaim(t *testing.T) {
	s, _ := testSession(t, testControlDir(t))
	waiting := make(chan struct{}, 1)
	s.reg.OnWait = func(string) { waiting <- struct{}{} }
	h, err := safefile.OpenLock(filepath.Join(s.reg.Dir, ".lock")) // another holder of the registry's lock
	if err != nil {
		t.Fatal(err)
	}
	defer safefile.Close(h)
	if err := safefile.TryLock(h); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "s.jsonl")
	claimed := make(chan control.Reply, 1)
	go func() { claimed <- s.handleControl(control.Request{Op: "claim", File: file}) }()
	<-waiting // the claim waits for the registry's lock, for up to registry.LockWait
	var w childWrite
	child := childInfo{pid: os.Getpid()}
	if got := s.writeChild(child, time.Now(), &w); got != busyRetry {
		t.Fatalf("the child's record while a claim writes: again in %v, want %v", got, busyRetry)
	}
	if got := s.heartbeat(time.Second).Run(time.Now()); got != 0 {
		t.Fatalf("the heartbeat while a claim writes: again in %v, want done", got)
	}
	select {
	case r := <-claimed: // only a job that waited for the claim gets here
		t.Fatalf("the jobs ran only once the claim was answered (%+v)", r)
	default:
	}
	safefile.Close(h)
	if r := <-claimed; r.Result != "claimed" {
		t.Fatalf("claim: %+v", r)
	}
	if got := s.writeChild(child, time.Now(), &w); got != 0 {
		t.Fatalf("the child's record once the claim wrote: again in %v, want done", got)
	}
	b, _ := os.ReadFile(s.reg.Path(s.self.Pid))
	if !bytes.Contains(b, []byte(`"child_pid": `+strconv.Itoa(child.pid))) || !bytes.Contains(b, []byte(strconv.Quote(file))) {
		t.Fatalf("the record lacks the child or the claimed file: %s", b)
	}
}

// TestRecord_DerivedFromTheHeldSet_NeverOlderThanWritten: the record names
// what the run holds, as it holds it; a write of an older state after a
// later one, or after the record was removed, writes nothing.
func TestRecord_DerivedFromTheHeldSet_NeverOlderThanWritten(t *testing.T) {
	s, _ := testSession(t, testControlDir(t))
	tmp := t.TempDir()
	a, b := filepath.Join(tmp, "a.jsonl"), filepath.Join(tmp, "b.jsonl")
	path := s.reg.Path(s.self.Pid)
	files := func() []string {
		var rec registry.Record
		if b, err := os.ReadFile(path); err != nil || json.Unmarshal(b, &rec) != nil || rec.Padrun == nil {
			t.Fatalf("record %s: %v", path, err)
		}
		return rec.Padrun.SessionFiles
	}
	s.mu.Lock()
	if err := s.take(a, ""); err != nil {
		t.Fatal(err)
	}
	older := s.derive()
	if err := s.take(b, ""); err != nil {
		t.Fatal(err)
	}
	s.unlock()
	if got := files(); !slices.Equal(got, []string{a, b}) {
		t.Fatalf("record's files %v, want %v", got, []string{a, b})
	}
	if err := s.tryWriteRecord(older); err != nil {
		t.Fatal(err)
	}
	if got := files(); !slices.Equal(got, []string{a, b}) {
		t.Fatalf("an older state overwrote a later one: record's files %v, want %v", got, []string{a, b})
	}
	s.mu.Lock()
	if err := s.drop(a); err != nil {
		t.Fatal(err)
	}
	s.unlock()
	if got := files(); !slices.Equal(got, []string{b}) {
		t.Fatalf("record's files once %s was released: %v, want %v", a, got, []string{b})
	}
	s.mu.Lock()
	if err := s.take(a, ""); err != nil {
		t.Fatal(err)
	}
	pending := s.derive() // a write under way as the run ends
	s.mu.Unlock()
	s.cleanup()
	if err := s.tryWriteRecord(pending); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("a write after the record's removal made it again: %v", err)
	}
}
