//go:build linux

package wrapper

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/padrun/padrun/marker/safefile"
	"github.com/padrun/padrun/registry"
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

// TestJobs_NeverWaitForAClaim: a claim holds the session while it writes
// the record (and may wait for the registry's lock meanwhile): the
// supervisor's jobs try again later rather than wait for it.
func TestJobs_NeverWaitForAClaim(t *testing.T) {
	s, _ := testSession(t, t.TempDir())
	s.mu.Lock() // a claim at work
	defer s.mu.Unlock()
	got := make(chan [2]time.Duration, 1)
	go func() {
		var w childWrite
		got <- [2]time.Duration{s.writeChild(childInfo{pid: os.Getpid()}, time.Now(), &w), s.heartbeat(time.Second).Run(time.Now())}
	}()
	select {
	case g := <-got:
		if g[0] != busyRetry || g[1] != busyRetry {
			t.Fatalf("the child's record and the heartbeat: again in %v and %v, want %v", g[0], g[1], busyRetry)
		}
	case <-time.After(time.Minute): // only a broken rule gets here
		t.Fatal("a job waits for the session while a claim holds it")
	}
}
