package wrapper

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/padrun/padrun/marker/ident"
	"github.com/padrun/padrun/registry"
)

// testRecords is a registry of its own and the makings of the run's
// record: gen's record names agent.
func testRecords(t *testing.T) (*registry.Registry, func(gen uint64, agent string) *recordWrite, func() string) {
	t.Helper()
	reg, err := registry.Open(filepath.Join(t.TempDir(), "reg"))
	if err != nil {
		t.Fatal(err)
	}
	self := ident.ReadSelf()
	mk := func(gen uint64, agent string) *recordWrite {
		return &recordWrite{gen: gen, rec: &registry.Record{SessionPID: self.Pid, Pid: self.Pid, ProcStart: self.StartToken,
			Agent: agent, Cwd: "/", RegisteredAt: "2026-01-01T00:00:00Z", Padrun: &registry.Padrun{Harness: "pi"}}}
	}
	written := func() string {
		if rec := written(t, reg); rec != nil {
			return rec.Agent
		}
		return ""
	}
	return reg, mk, written
}

// TestRecordWriter_NeverOlderThanWritten: a write of a state older than
// the one written writes nothing, waiting or not.
func TestRecordWriter_NeverOlderThanWritten(t *testing.T) {
	reg, rec, written := testRecords(t)
	var rw recordWriter
	ctx := context.Background()
	if err := rw.write(ctx, reg, rec(2, "second")); err != nil {
		t.Fatal(err)
	}
	if err := rw.write(ctx, reg, rec(1, "first")); err != nil {
		t.Fatal(err)
	}
	if err := rw.tryWrite(reg, rec(2, "second again")); err != nil {
		t.Fatal(err)
	}
	if got := written(); got != "second" {
		t.Fatalf("record of %q, want the later state's", got)
	}
	if err := rw.tryWrite(reg, rec(3, "third")); err != nil || written() != "third" {
		t.Fatalf("a later state: %v, record of %q", err, written())
	}
}

// TestRecordWriter_TryWriteNeverWaits: while a write is under way, a try
// says so at once and writes nothing.
func TestRecordWriter_TryWriteNeverWaits(t *testing.T) {
	reg, rec, written := testRecords(t)
	var rw recordWriter
	rw.mu.Lock() // a write under way
	if err := rw.tryWrite(reg, rec(1, "first")); err != errWriting {
		t.Fatalf("a try while a write is under way: %v, want errWriting", err)
	}
	rw.mu.Unlock()
	if got := written(); got != "" {
		t.Fatalf("a busy try wrote the record of %q", got)
	}
}

// TestRecordWriter_NoneAfterRemove: once the record is removed no write
// makes it again, of any state; a record never written removes nothing.
func TestRecordWriter_NoneAfterRemove(t *testing.T) {
	reg, rec, written := testRecords(t)
	var rw recordWriter
	ctx := context.Background()
	if err := rw.write(ctx, reg, rec(1, "first")); err != nil {
		t.Fatal(err)
	}
	late := rec(2, "late")
	if err := rw.remove(reg, late.rec); err != nil {
		t.Fatal(err)
	}
	if got := written(); got != "" {
		t.Fatalf("the removed record is there, of %q", got)
	}
	if err := rw.write(ctx, reg, rec(5, "after")); err != nil {
		t.Fatal(err)
	}
	if err := rw.tryWrite(reg, late); err != nil {
		t.Fatal(err)
	}
	if got := written(); got != "" {
		t.Fatalf("a write after the removal made the record again, of %q", got)
	}
	var none recordWriter
	if err := none.remove(reg, nil); err != nil || none.write(ctx, reg, rec(1, "x")) != nil || written() != "" {
		t.Fatal("a writer whose record was never written wrote one after its removal")
	}
}
