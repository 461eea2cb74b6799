package wrapper

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/padrun/padrun/marker"
	"github.com/padrun/padrun/marker/ident"
	"github.com/padrun/padrun/registry"
)

// heldSet is the one list of the files a run holds, and the record derived
// from it: the record's session files and markers are the held files', and
// each change of them is written, in order, once its lock is released. Its
// lock guards locks, rec, latest, child and left; the session's claims are
// decided with the set, under the same lock (session).
type heldSet struct {
	mu sync.Mutex
	// locks are the held files, one hold each.
	locks []*marker.Hold
	// rec is the record but its session files and markers, nil without one
	// or once the run has ended; latest is the record last derived from it
	// and locks (derive).
	rec    *registry.Record
	latest *recordWrite
	child  childInfo // what the markers record of the child, once known
	left   []int     // processes of the session that outlived padrun's end of it

	// records writes the record, once mu is released, in the order of its
	// gens (record.go), under a lock of its own.
	records recordWriter
}

// holdOf is the hold of file, or nil. The caller holds mu.
func (h *heldSet) holdOf(file string) *marker.Hold {
	if i := slices.IndexFunc(h.locks, func(l *marker.Hold) bool { return l.File == file }); i >= 0 {
		return h.locks[i]
	}
	return nil
}

// heldLocked tells whether the set holds file. The caller holds mu.
func (h *heldSet) heldLocked(file string) bool { return h.holdOf(file) != nil }

// files are the held files, in the set's order. The caller holds mu.
func (h *heldSet) files() []string {
	files := make([]string, 0, len(h.locks))
	for _, l := range h.locks {
		files = append(files, l.File)
	}
	return files
}

// add holds l too, with the child in its marker once the child is known.
// The caller holds mu.
func (h *heldSet) add(l *marker.Hold) error {
	h.locks = append(h.locks, l)
	if c := h.child; c.pid > 0 {
		return l.SetChild(c.pid, c.token, c.pgid, c.sid)
	}
	return nil
}

// sort puts the held files in the order of their names, as the record
// lists them. The caller holds mu.
func (h *heldSet) sort() {
	slices.SortFunc(h.locks, func(a, b *marker.Hold) int { return strings.Compare(a.File, b.File) })
}

// remove takes l out of the set, unreleased. The caller holds mu.
func (h *heldSet) remove(l *marker.Hold) {
	h.locks = slices.DeleteFunc(h.locks, func(k *marker.Hold) bool { return k == l })
}

// setChild records the child in the record and in every held file's
// marker; a file held later gets it from add. The caller holds mu.
func (h *heldSet) setChild(c childInfo) []error {
	var errs []error
	h.child = c
	if h.rec != nil {
		h.rec.Padrun.ChildPid, h.rec.Padrun.ChildProcStart = c.pid, ident.Token(c.token)
	}
	for _, l := range h.locks {
		if err := l.SetChild(c.pid, c.token, c.pgid, c.sid); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// releaseAll drops every hold, removing its marker; while processes of the
// session outlive padrun (left), the markers stay, so that the next run's
// orphan check finds them. The caller holds mu.
func (h *heldSet) releaseAll() []error {
	var errs []error
	for i := len(h.locks) - 1; i >= 0; i-- {
		release := h.locks[i].Release
		if len(h.left) > 0 {
			release = h.locks[i].Keep
		}
		if err := release(); err != nil {
			errs = append(errs, err)
		}
	}
	h.locks = nil
	return errs
}

// end ends the record: nothing changes it or is derived from the set
// after. It returns the record to remove. The caller holds mu.
func (h *heldSet) end() *registry.Record {
	rec := h.rec
	h.rec = nil
	return rec
}

// derive makes the record from rec and the held files, under mu, and
// returns it when it says something the last one did not; else nil.
func (h *heldSet) derive() *recordWrite {
	if h.rec == nil {
		return nil
	}
	rec := *h.rec
	p := *rec.Padrun
	// Empty lists, not null: pad reads both as lists.
	p.SessionFiles, p.Markers = make([]string, 0, len(h.locks)), make([]string, 0, len(h.locks))
	for _, l := range h.locks {
		p.SessionFiles = append(p.SessionFiles, l.File)
		p.Markers = append(p.Markers, marker.Path(l.File))
	}
	rec.Padrun = &p
	if h.latest != nil && reflect.DeepEqual(&rec, h.latest.rec) {
		return nil
	}
	w := &recordWrite{gen: 1, rec: &rec}
	if h.latest != nil {
		w.gen = h.latest.gen + 1
	}
	h.latest = w
	return w
}

// commit releases mu, then writes the record into reg when the set
// changed under it: the write may wait for the registry's lock, and
// nothing waits for mu meanwhile.
func (h *heldSet) commit(reg *registry.Registry) error {
	w := h.derive()
	h.mu.Unlock()
	if w == nil {
		return nil
	}
	return h.records.write(context.Background(), reg, w)
}
