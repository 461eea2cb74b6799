package wrapper

import (
	"maps"
	"path/filepath"
	"slices"

	"github.com/padrun/padrun/wrapper/harness"
)

// A harness's start-up picker (claude -r, harness.Plan.Picker) lists the
// project's sessions and writes to the one picked before its companion is
// asked (docs/spec.md §4.2). While it is open padrun holds every session
// it lists that is free, so a pick of one is the run's already; when the
// companion claims the pick, the others are released. A session held
// elsewhere cannot be held. claude reads each listed transcript to draw
// its list; when a pick is made it reads its live sessions (the picker's
// Signal folder) and then the picked transcript, 20-30 ms before it
// writes (2.1.332 under strace). So once every session held elsewhere has
// been read and the Signal folder is read after that, a read of one held
// elsewhere is the pick, refused before claude writes. The holder's own
// appends are writes, never reads, so they neither list nor pick.

// holdPicker takes every free session the picker lists; the ones held
// elsewhere are left to the watch (watchPicker). Call it once the record
// is written.
func (s *session) holdPicker(p *harness.Picker) {
	if p == nil {
		return
	}
	s.mu.Lock()
	defer s.unlock()
	s.picker = &pickState{elsewhere: map[string]bool{}}
	for _, f := range p.Files {
		file, err := CanonicalFile(f)
		if err != nil || s.heldLocked(file) {
			continue
		}
		if err := s.take(file, ""); err != nil {
			s.o.Log.Debug().Err(err).Str("file", file).Msg("picker: a session held elsewhere")
			s.picker.elsewhere[file] = false
			continue
		}
		s.picker.held = append(s.picker.held, file)
	}
}

// pickState is what the run knows of an open picker: the sessions held
// for it, the ones held elsewhere (true once claude has read them), and
// whether the next read of one is the pick.
type pickState struct {
	held      []string
	elsewhere map[string]bool
	armed     bool
}

// pickedLocked ends the picker once the companion has claimed file, its
// pick: every other session held for it is released. The caller holds
// s.mu.
func (s *session) pickedLocked(file string) {
	if s.picker == nil {
		return
	}
	for _, f := range s.picker.held {
		if f == file {
			continue
		}
		if err := s.drop(f); err != nil {
			s.o.Log.Warn().Err(err).Str("file", f).Msg("release a session the picker listed")
		}
	}
	s.picker = nil
	s.o.Log.Debug().Str("file", file).Msg("picker: picked; the other sessions released")
}

// pickSignal is the harness reading its live sessions: a pick, once every
// session held elsewhere has been read for the list.
func (s *session) pickSignal() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.picker; p != nil && !slices.Contains(slices.Collect(maps.Values(p.elsewhere)), false) {
		p.armed = true
	}
}

// pickRead judges a read of a transcript of the project while the picker
// is open: of one held for it, it disarms (the pick is the run's); of one
// held elsewhere, it lists it, or when armed is the pick, which is refused
// and the harness ended before it writes.
func (s *session) pickRead(path string) {
	file, err := CanonicalFile(path)
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.unlock()
	p := s.picker
	switch {
	case p == nil:
	case s.heldLocked(file):
		p.armed = false
	case !p.armed:
		if _, ok := p.elsewhere[file]; ok {
			p.elsewhere[file] = true
		}
	default:
		if err := s.take(file, ""); err != nil {
			s.stopHarness(err)
			s.o.Log.Debug().Err(err).Str("file", file).Msg("picker: picked a session held elsewhere; the harness is ended before it writes")
			return
		}
		p.held = append(p.held, file) // free by now
		p.armed = false
	}
}

// watchPicker watches the picker's folders while it is open (pickSignal,
// pickRead). Call stop before cleanup.
func (s *session) watchPicker(plan harness.Plan) (stop func()) {
	p := plan.Picker
	if p == nil || len(plan.Watch) == 0 {
		return func() {}
	}
	dir := plan.Watch[0].Dir
	n := startPickNotify(p.Signal, dir, s.pickSignal, func(name string) {
		if filepath.Ext(name) == ".jsonl" {
			s.pickRead(filepath.Join(dir, name))
		}
	})
	if n == nil {
		s.o.Log.Warn().Str("harness", plan.Harness).Msg("cannot watch " + plan.Harness + "'s picker: a pick of a session held elsewhere may be written to before padrun refuses it")
		return func() {}
	}
	return n.stop
}
