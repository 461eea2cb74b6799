package wrapper

import (
	"context"
	"errors"
	"math"
	"sync"

	"github.com/padrun/padrun/registry"
)

// recordWrite is the record as the session's state derived it once: its
// gen counts the changes, so that a write never replaces a later one. It
// is never changed once made.
type recordWrite struct {
	gen uint64
	rec *registry.Record
}

// errWriting says another write of the record is under way.
var errWriting = errors.New("wrapper: the record is being written")

// recordWriter orders the writes of the session's record, made once the
// session's lock is released: its lock is held across a write, which may
// wait for the registry's lock, and guards wrote, the gen of the last one
// written (the largest once the record is removed): an older one is never
// written after it.
type recordWriter struct {
	mu    sync.Mutex
	wrote uint64
}

// write writes w, waiting for a write under way and for the registry's
// lock, unless a later state is written already.
func (rw *recordWriter) write(ctx context.Context, reg *registry.Registry, w *recordWrite) error {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if w.gen <= rw.wrote {
		return nil // a later state is written already, or the record is gone
	}
	if err := reg.Write(ctx, w.rec); err != nil {
		return err
	}
	rw.wrote = w.gen
	return nil
}

// tryWrite is write without waiting: errWriting while another write is
// under way, a *registry.LockError while another process holds the
// registry's lock.
func (rw *recordWriter) tryWrite(reg *registry.Registry, w *recordWrite) error {
	if !rw.mu.TryLock() {
		return errWriting
	}
	defer rw.mu.Unlock()
	if w.gen <= rw.wrote {
		return nil
	}
	if err := reg.TryWrite(w.rec); err != nil {
		return err
	}
	rw.wrote = w.gen
	return nil
}

// remove removes rec, once any write under way is done; none is written
// after it. A nil rec was never written.
func (rw *recordWriter) remove(reg *registry.Registry, rec *registry.Record) error {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	rw.wrote = math.MaxUint64
	if rec == nil {
		return nil
	}
	return reg.Remove(context.Background(), rec.SessionPID, string(rec.ProcStart))
}
