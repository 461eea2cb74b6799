package wrapper

import (
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// TestGreeting_StartLocksHoldTheClock: while a process of the run's tree
// holds a lock of the harness's start (opencode installing its plugin),
// the clock waits; once it is released, the clock runs again in full.
func TestGreeting_StartLocksHoldTheClock(t *testing.T) {
	g, log, refused := testGreeting(time.Millisecond, false, true)
	dir := t.TempDir()
	lock := filepath.Join(dir, "plugin.lock")
	if err := os.Mkdir(lock, 0o700); err != nil {
		t.Fatal(err)
	}
	meta := filepath.Join(lock, "meta.json")
	if err := os.WriteFile(meta, []byte(`{"pid":`+strconv.Itoa(os.Getpid())+`}`), 0o600); err != nil {
		t.Fatal(err)
	}
	g.startLocks, g.root = dir, os.Getpid()
	var released atomic.Bool
	refuse := g.refuse
	g.refuse = func(err *UsageError, running bool) {
		if !released.Load() {
			t.Error("refused while the harness's start held the companion back")
		}
		refuse(err, running)
	}
	g.started()
	log.waitLine(t, "the harness's start holds it back")
	released.Store(true)
	if err := os.Remove(meta); err != nil {
		t.Fatal(err)
	}
	if r := <-refused; !r.running {
		t.Fatalf("refusal %v", r.err)
	}
}
