package wrapper

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/padrun/padrun/marker"
	"github.com/padrun/padrun/marker/ident"
)

// TestStatus_InUseLockHolds: a file no marker holds is held by a live
// writer's in-use lock of its harness (copilot's inuse.PID.lock), and free
// once that lock names a dead writer.
func TestStatus_InUseLockHolds(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "session-state", "0b9e1c2d-3f4a-4b5c-8d6e-7f8091a2b3c4")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "events.jsonl")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	self := ident.ReadSelf()
	if st := Status(file, self, time.Now()); !st.Free() {
		t.Fatalf("no lock: %v %v, want free", st.State, st.Reason)
	}
	lock := filepath.Join(dir, "inuse."+strconv.Itoa(os.Getpid())+".lock")
	if err := os.WriteFile(lock, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	st := Status(file, self, time.Now())
	if st.State != marker.Held || st.Verdict != ident.Alive || st.Holder == nil || st.Holder.Pid != os.Getpid() {
		t.Fatalf("this process's lock: %v %v %v, want held by pid %d", st.State, st.Verdict, st.Holder, os.Getpid())
	}
	// Written an hour before this process started: its pid was reused.
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(lock, old, old); err != nil {
		t.Fatal(err)
	}
	if st := Status(file, self, time.Now()); !st.Free() {
		t.Fatalf("a dead writer's lock: %v %v, want free", st.State, st.Reason)
	}
}
