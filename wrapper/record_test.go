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
