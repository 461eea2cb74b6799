package wrapper

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/padrun/padrun/marker"
	"github.com/padrun/padrun/marker/ident"
	"github.com/padrun/padrun/registry"
)

// testHeld is a held set with a record, in a registry of its own, and a
// way to hold one more file of a folder of its own.
func testHeld(t *testing.T) (*heldSet, *registry.Registry, func(name string) *marker.Hold) {
	t.Helper()
	reg, err := registry.Open(filepath.Join(t.TempDir(), "reg"))
	if err != nil {
		t.Fatal(err)
	}
	self := ident.ReadSelf()
	h := &heldSet{rec: &registry.Record{SessionPID: self.Pid, Pid: self.Pid, ProcStart: self.StartToken, Cwd: "/",
		RegisteredAt: "2026-01-01T00:00:00Z", Padrun: &registry.Padrun{Harness: "pi"}}}
	dir := t.TempDir()
	take := func(name string) *marker.Hold {
		t.Helper()
		l, err := marker.TryAcquire(filepath.Join(dir, name), marker.New(self, "", uuid.NewString(), time.Now()), self)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = l.Release() })
		return l
	}
	return h, reg, take
}

// written is the record of this process in reg, or nil.
func written(t *testing.T, reg *registry.Registry) *registry.Record {
	t.Helper()
	b, err := os.ReadFile(reg.Path(os.Getpid()))
	if os.IsNotExist(err) {
		return nil
	}
	var rec registry.Record
	if err != nil || json.Unmarshal(b, &rec) != nil {
		t.Fatalf("record: %v %s", err, b)
	}
	return &rec
}

// The record lists the held files and their markers, in the set's order,
// and is written again only when that changes, each change with a later gen.
func TestHeld_RecordIsDerivedFromTheHeldFiles(t *testing.T) {
	h, reg, take := testHeld(t)
	b, a := take("b.jsonl"), take("a.jsonl")
	h.mu.Lock()
	_ = h.add(b)
	_ = h.add(a)
	h.sort()
	if err := h.commit(reg); err != nil {
		t.Fatal(err)
	}
	rec := written(t, reg)
	if rec == nil || !slices.Equal(rec.Padrun.SessionFiles, []string{a.File, b.File}) ||
		!slices.Equal(rec.Padrun.Markers, []string{marker.Path(a.File), marker.Path(b.File)}) {
		t.Fatalf("record %+v, want a then b with their markers", rec)
	}
	h.mu.Lock()
	first := h.latest
	if w := h.derive(); w != nil {
		t.Errorf("derived again with nothing changed: gen %d", w.gen)
	}
	h.remove(a)
	w := h.derive()
	h.mu.Unlock()
	if w == nil || w.gen != first.gen+1 || !slices.Equal(w.rec.Padrun.SessionFiles, []string{b.File}) {
		t.Fatalf("after a is dropped: %+v, want gen %d listing b alone", w, first.gen+1)
	}
}

// A file held once the child is known gets the child in its marker, as
// the files held before it do.
func TestHeld_ChildGoesToEveryMarker(t *testing.T) {
	h, _, take := testHeld(t)
	before, after := take("before.jsonl"), take("after.jsonl")
	c := childInfo{pid: os.Getpid(), token: "t1", pgid: os.Getpid(), sid: os.Getpid()}
	h.mu.Lock()
	defer h.mu.Unlock()
	_ = h.add(before)
	if errs := h.setChild(c); len(errs) > 0 {
		t.Fatal(errs)
	}
	if err := h.add(after); err != nil {
		t.Fatal(err)
	}
	for _, l := range []*marker.Hold{before, after} {
		m, err := marker.Read(l.File)
		if err != nil {
			t.Fatal(err)
		}
		if m.ChildPid != c.pid {
			t.Errorf("%s: marker's child %d, want %d", filepath.Base(l.File), m.ChildPid, c.pid)
		}
	}
	if h.rec.Padrun.ChildPid != c.pid || h.rec.Padrun.ChildProcStart != "t1" {
		t.Errorf("record's child %d %q, want %d t1", h.rec.Padrun.ChildPid, h.rec.Padrun.ChildProcStart, c.pid)
	}
}

// Released, the markers go; while processes of the session outlive
// padrun, they stay. Once ended, nothing is derived or written.
func TestHeld_ReleaseKeepsMarkersOfWhatOutlivedTheRun(t *testing.T) {
	for _, left := range []bool{false, true} {
		h, reg, take := testHeld(t)
		l := take("s.jsonl")
		h.mu.Lock()
		_ = h.add(l)
		if left {
			h.left = []int{os.Getpid()}
		}
		if errs := h.releaseAll(); len(errs) > 0 {
			t.Fatal(errs)
		}
		_, err := os.Stat(marker.Path(l.File))
		if kept := err == nil; kept != left {
			t.Errorf("left %v: marker kept %v", left, kept)
		}
		if h.end() == nil {
			t.Fatal("end returned no record")
		}
		if err := h.commit(reg); err != nil || written(t, reg) != nil {
			t.Errorf("ended, a record was written: %v %+v", err, written(t, reg))
		}
	}
}
