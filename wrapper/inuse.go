package wrapper

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/padrun/padrun/marker"
	"github.com/padrun/padrun/marker/ident"
	"github.com/padrun/padrun/supervise"
	"github.com/padrun/padrun/wrapper/harness"
)

// A harness may keep in-use locks of its own beside a session file
// (copilot's inuse.<PID>.lock, harness.Adapter.InUse). It only warns of
// them; padrun makes them count: a live writer that is not of the run's
// own tree holds the file as a foreign session does, and the locks the
// run's tree wrote are removed once their writer is dead, whether the
// harness ended, was killed or padrun ended it.

// ownInUse is an in-use lock the run's own tree wrote: its writer, proven
// by its start token to be the same process when it is judged dead.
type ownInUse struct {
	file  string // the session file it is beside
	pid   int
	token string
}

// judgeInUse judges an in-use lock's writer by the ladder's rule
// (marker.InUseWriter): the lock records no start token.
func judgeInUse(l harness.InUseLock) marker.Judgement {
	started, ok := startedAt(l.Pid)
	return marker.InUseWriter(l.Pid, l.Written, started, ok)
}

// inUseRefusal is the refusal of file for the live (or unjudgeable)
// writer of its harness's in-use lock l. A waiter polls: the writer's
// going away ends it.
func inUseRefusal(file string, l harness.InUseLock, j marker.Judgement) *marker.HeldError {
	return &marker.HeldError{File: file, Kind: marker.HeldPolled, Judgement: marker.InUse(filepath.Base(l.Path), l.Harness, j), Holder: &marker.Marker{
		ID: ident.ID{Pid: l.Pid}, Tool: l.Harness, Harness: l.Harness, SessionFile: file, UID: -1,
		CreatedAt: l.Written.UTC().Format(time.RFC3339Nano),
	}}
}

// inUseHolder is the refusal of file when a live process holds one of
// its harness's own in-use locks of it; nil when none does.
func inUseHolder(file string) *marker.HeldError {
	locks, _ := harness.InUseLocks(file)
	for _, l := range locks {
		if j := judgeInUse(l); j.Verdict != ident.Dead {
			return inUseRefusal(file, l, j)
		}
	}
	return nil
}

// inUseTracker keeps the harness's in-use locks the run's own tree wrote,
// so that the run's end removes them once their writer is dead, and the
// sessions they claimed (inuseclaim.go). Its lock guards own, claims and
// notify; it is taken under the session's, never the reverse, and never
// held while waiting for another process.
type inUseTracker struct {
	root int // padrun's pid: the run's tree is its
	log  zerolog.Logger

	mu     sync.Mutex
	own    map[string]ownInUse // by the lock's path; nil when none is known
	claims map[string]bool     // the session files claimed by a lock of the tree
	notify *inUseNotify        // the prompt watch of their folders, while it runs
}

// claimed reports whether the session file was claimed by an in-use lock
// of the run's tree.
func (t *inUseTracker) claimed(file string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.claims[file]
}

// claim records that an in-use lock of the run's tree claimed the session
// file.
func (t *inUseTracker) claim(file string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.claims == nil {
		t.claims = map[string]bool{}
	}
	t.claims[file] = true
}

// held is the refusal of a file the run has just taken when a live process
// that is not of the run's own tree holds one of its harness's in-use
// locks; the locks of the tree are recorded as the run's.
func (t *inUseTracker) held(file string) error {
	locks, _ := harness.InUseLocks(file)
	for _, l := range locks {
		if t.owns(file, l) {
			continue
		}
		j := judgeInUse(l)
		if j.Verdict != ident.Dead {
			return inUseRefusal(file, l, j)
		}
	}
	return nil
}

// owns records l as the run's when its writer, alive, is of the run's own
// tree, and reports whether it is the run's.
func (t *inUseTracker) owns(file string, l harness.InUseLock) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if o, ok := t.own[l.Path]; ok && o.pid == l.Pid {
		return true
	}
	if !ofTree(l.Pid, t.root) {
		return false
	}
	token, err := ident.StartToken(l.Pid)
	if err != nil {
		return false // gone meanwhile: no proof
	}
	if t.own == nil {
		t.own = map[string]ownInUse{}
	}
	t.own[l.Path] = ownInUse{file: file, pid: l.Pid, token: token}
	t.log.Debug().Str("lock", l.Path).Int("pid", l.Pid).Msg("in-use lock of this run's tree")
	return true
}

// learn records the in-use locks of the run's tree beside files.
func (t *inUseTracker) learn(files []string) {
	for _, f := range files {
		locks, _ := harness.InUseLocks(f)
		for _, l := range locks {
			t.owns(f, l)
		}
	}
}

// watchDir watches the folder of a held file whose harness keeps in-use
// locks beside it, while the prompt watch runs.
func (t *inUseTracker) watchDir(file string) {
	if _, ok := harness.InUseLocks(file); !ok {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.notify.add(filepath.Dir(file))
}

// setNotify names the prompt watch, and watches the folders of files.
func (t *inUseTracker) setNotify(n *inUseNotify, files []string) {
	t.mu.Lock()
	t.notify = n
	t.mu.Unlock()
	for _, f := range files {
		t.watchDir(f)
	}
}

// inUseFirst and inUseEvery bound how often the run looks for in-use
// locks its tree writes, beside the folder watch that sees them at once
// where there is one: soon after the start or a new session file, then
// every second (a harness writes one when it opens a session).
const (
	inUseFirst = 10 * time.Millisecond
	inUseEvery = time.Second
)

// watchInUse learns the in-use locks the run's tree writes beside the
// session files the run holds, so that cleanup can remove them: a watch of
// their folders, and the job Supervise runs. Nothing when no file the run
// may hold has them. Call stop before cleanup.
func (s *session) watchInUse(r *run) (stop func()) {
	a, _ := harness.Lookup(r.plan.Harness)
	keeps := a.InUse != nil
	for _, f := range r.files {
		_, ok := harness.InUseLocks(f)
		keeps = keeps || ok
	}
	if !keeps {
		return func() {}
	}
	n := startInUseNotify(func(string) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.inUse.learn(s.files())
	}, func() {
		s.watchOverflowed("the watch for the harness's in-use locks", "read again the in-use locks beside every held file")
	})
	s.mu.Lock() // the folder watch may claim a new file meanwhile
	s.inUse.setNotify(n, s.files())
	s.mu.Unlock()
	next, files := inUseFirst, -1
	s.inUseWatch = &supervise.Job{Run: func(time.Time) time.Duration {
		if !s.mu.TryLock() {
			return busyRetry // a claim at work: see writeChild
		}
		defer s.mu.Unlock()
		if len(s.locks) != files {
			files, next = len(s.locks), inUseFirst // a new session: look again soon
		}
		s.inUse.learn(s.files())
		next = min(2*next, inUseEvery)
		return next
	}}
	return n.stop
}

// remove removes the in-use locks the run's tree wrote whose writer is
// dead; one whose writer lives on (it outlived the run's end of it) is
// left to it.
func (t *inUseTracker) remove() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for path, o := range t.own {
		if j := marker.Local(o.pid, o.token); j.Verdict != ident.Dead {
			t.log.Debug().Str("lock", path).Str("writer", j.Reason).Msg("in-use lock kept: its writer lives")
			continue
		}
		// What goes with the lock is listed now: the harness may write it
		// after the lock (copilot's .hold).
		also := []string{path}
		locks, _ := harness.InUseLocks(o.file)
		for _, l := range locks {
			if l.Path == path {
				also = append(also, l.Also...)
			}
		}
		for _, p := range also {
			if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				t.log.Warn().Err(err).Msg("remove an in-use lock the harness left")
			}
		}
		delete(t.own, path)
	}
}
