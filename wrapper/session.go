package wrapper

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/padrun/padrun/marker"
	"github.com/padrun/padrun/marker/ident"
	"github.com/padrun/padrun/registry"
	"github.com/padrun/padrun/supervise"
	"github.com/padrun/padrun/wrapper/harness"
	"github.com/padrun/padrun/wrapper/watch"
)

// watch claims every new session file the child's process tree creates in
// the harness's session folders, at once: a marker, no refusal. A new file
// it cannot prove the run's is left alone, and padrun says so. Start it before
// the child and name the child with setChild; stop may be called again.
func (s *session) watch(ws []harness.Watch, now time.Time) (stop func(), setChild func(int)) {
	if len(ws) == 0 {
		return func() {}, func(int) {}
	}
	claim := func(path string) {
		if s.claim(path) {
			s.greet.watchClaimed()
		}
	}
	overflow := func(roots []string) {
		s.watchOverflowed("the watch for new session files", "rescanned every watched folder ("+strings.Join(roots, ", ")+") for them")
	}
	stop, setChild, err := watch.Start(ws, now, watch.Events{Claim: claim, Unowned: s.unowned, Wrote: s.learnHeader, Overflow: overflow})
	if err != nil {
		s.o.Log.Warn().Err(err).Msg("cannot watch for new session files")
		return func() {}, func(int) {}
	}
	return sync.OnceFunc(stop), setChild
}

// claim guards a session file the child has just created, and reports
// whether it holds it.
func (s *session) claim(path string) bool {
	file, err := CanonicalFile(path)
	if err != nil {
		return false
	}
	s.mu.Lock()
	defer s.unlock()
	if err := s.take(file, ""); err != nil {
		var held *marker.HeldError
		switch {
		case !errors.As(err, &held):
			s.o.Log.Warn().Err(err).Str("file", file).Msg("new session file not claimed")
		case s.ofThisRun(held):
			s.o.Log.Info().Str("file", file).Msg("new session file held by a session nested in this run, or by its outer session")
		case s.greet.muting():
			s.o.Log.Debug().Str("file", file).Msg("new session file held by another session: left to the companion")
		default:
			s.loseHold(file, held)
		}
		return false
	}
	s.learnHeaderLocked(file)
	return true
}

// take guards file for this session, without waiting, unless it holds it
// already; sessionID, when known, goes to its marker and the record. The
// caller holds s.mu, and releases it with unlock, which writes the record.
// A refusal is a *marker.HeldError.
func (s *session) take(file, sessionID string) error {
	if s.rec == nil {
		return errors.New("wrapper: the session has ended")
	}
	if l := s.holdOf(file); l != nil {
		s.learnID(l, sessionID)
		s.learnEtcd(file, sessionID)
		return nil
	}
	m := s.proto
	m.Nonce = ident.NewUUID()
	m.SessionID = sessionID
	l, err := marker.TryAcquire(file, m, s.self)
	if err != nil {
		s.markOuter(err)
		return err
	}
	err = s.inUse.held(file)
	if err == nil {
		err = s.outsideHeld(&outsideLook{}, file)
	}
	if err == nil {
		err = s.claimEtcd(file, sessionID) // before the harness writes it
	}
	if err != nil {
		if rerr := l.Release(); rerr != nil {
			s.o.Log.Warn().Err(rerr).Msg("release")
		}
		return err
	}
	if err := s.add(l); err != nil {
		s.o.Log.Warn().Err(err).Msg("record child in marker")
	}
	s.warnFS(l)
	s.inUse.watchDir(file)
	if !slices.Contains(s.names, file) {
		s.names = append(s.names, file)
	}
	if s.follower != nil {
		s.follower.wake() // watch the way to it too
	}
	s.o.Log.Info().Str("file", file).Msg("claimed new session file")
	if sessionID != "" {
		s.rec.SessionID = sessionID
	}
	return nil
}

// learnID records the harness's session id of a held file in its marker
// and, as the session's current one, in the record.
func (s *session) learnID(l *marker.Hold, id string) {
	if id == "" {
		return
	}
	if err := l.SetSessionID(id); err != nil {
		s.o.Log.Warn().Err(err).Msg("record session id in marker")
	}
	s.rec.SessionID = id
}

// unowned says that a new session file was left unclaimed: another
// process writes it (debug: codex's folder is shared by every project), or
// no writer of the run's own was seen (a warning).
func (s *session) unowned(path, why string) {
	if file, err := CanonicalFile(path); err == nil && s.holds(file) {
		return // a file the run guards already: pinned before the harness wrote it
	}
	if s.greet.muting() {
		s.o.Log.Debug().Str("file", path).Msg("new session file left to the companion")
		return
	}
	if why == watch.WhyForeign {
		s.o.Log.Debug().Str("file", path).Msg("new session file of another process: not claimed")
		return
	}
	s.o.Log.Warn().Str("file", path).Msg("new session file not claimed: padrun cannot prove this run writes it (" + why + "); it is unguarded")
}

func (s *session) holds(file string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.heldLocked(file)
}

// learnHeader reads the harness's session id from a claimed file's header
// once the harness has written it, into its marker and the record.
func (s *session) learnHeader(path string) {
	file, err := CanonicalFile(path)
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.unlock()
	s.learnHeaderLocked(file)
}

// learnHeaderLocked is learnHeader for a caller that holds s.mu. A session
// id already known is kept.
func (s *session) learnHeaderLocked(file string) {
	if s.rec != nil {
		s.learnEtcd(file, "")
	}
	if s.rec == nil || s.rec.SessionID != "" {
		return
	}
	if l := s.holdOf(file); l != nil {
		s.learnID(l, harness.HeaderID(file))
	}
}

// drop releases a file the harness has left, when this session holds it.
// The caller holds s.mu, and releases it with unlock.
func (s *session) drop(file string) error {
	l := s.holdOf(file)
	if l == nil || s.rec == nil {
		return nil
	}
	s.remove(l)
	s.unfollow(file)
	s.dropEtcd(file)
	return l.Release()
}

// release drops every lock taken, removing our markers, but those that
// processes outliving padrun keep (heldSet.releaseAll).
func (s *session) release() {
	for _, err := range s.releaseAll() {
		s.o.Log.Warn().Err(err).Msg("release")
	}
}

// cleanup undoes the run: markers and locks, the session's cgroup, then the
// registry record. It runs on every return of Run, panics included.
func (s *session) cleanup() {
	s.mu.Lock()
	if len(s.left) == 0 {
		// Before the markers that name it go: a padrun killed in between
		// leaves a marker naming no cgroup, never a cgroup no marker names.
		s.cg.Remove() // Best effort: an empty cgroup left behind is removed by the next run.
	}
	s.inUse.remove() // while the files are held: no other run takes them meanwhile
	s.release()
	rec := s.end() // the session has ended: nothing takes a file or changes the record now
	s.mu.Unlock()
	s.releaseEtcd()
	s.removeRecord(rec)
}

// recordDelay is how long a child runs before padrun records it: a child
// that is gone by then needs no record, and while padrun holds the lock no
// rival judges the marker. (Were padrun killed before, its child dies with it.)
const recordDelay = 5 * time.Millisecond

// recordChild is the job that adds the child to the markers and the
// record once it has run recordDelay: Supervise runs it while the child
// runs, and EndRest while what it left is ended; a child gone before needs
// no record.
func (s *session) recordChild(c childInfo) supervise.Job {
	delay := recordDelay
	if !c.inCgroup {
		// Without a cgroup, the marker is the only record of the
		// child's group, which its descendants may outlive padrun in.
		delay = 0
	}
	var w childWrite
	return supervise.Job{After: delay, Run: func(now time.Time) time.Duration { return s.writeChild(c, now, &w) }}
}

// busyRetry is how soon the child's record is tried again while another
// write of the record is under way: it may be waiting for the registry's
// lock.
const busyRetry = 10 * time.Millisecond

// childWrite is how far writing the child has come.
type childWrite struct {
	marked bool          // the markers and s.rec have it
	busy   time.Time     // when the registry's lock was first found held
	retry  time.Duration // the last wait for it
	told   bool          // people were told it stays held
}

// writeChild writes the child into the markers, then into the record. It
// waits for no other process, so that the supervisor forwards signals
// meanwhile (s.mu is never held across such a wait): while another write
// of the record is under way it returns busyRetry; while another process
// holds the registry's lock, how soon to try again, backing off to a
// second, and it says so once the lock has been held for registry.LockWait.
func (s *session) writeChild(c childInfo, now time.Time, w *childWrite) time.Duration {
	s.mu.Lock()
	if !w.marked {
		token, err := ident.StartToken(c.pid)
		if err != nil {
			s.o.Log.Debug().Err(err).Int("child_pid", c.pid).Msg("child start token")
		}
		if s.rec != nil { // else cleaned up already
			c.token = token
			for _, err := range s.setChild(c) {
				s.o.Log.Warn().Err(err).Msg("record child in marker")
			}
			s.derive()
		}
		w.marked = true
	}
	latest := s.latest // the child's, or a later one
	s.mu.Unlock()
	if latest == nil {
		return 0
	}
	err := s.tryWriteRecord(latest)
	var held *registry.LockError
	switch {
	case err == errWriting:
		return busyRetry
	case errors.As(err, &held):
		if w.busy.IsZero() {
			w.busy = now
		}
		if !w.told && now.Sub(w.busy) >= registry.LockWait {
			w.told = true
			who := held.Holder
			if who == "" {
				who = "another process"
			}
			s.o.Log.Warn().Msg("the registry's lock is held by " + who + ": the record gets the child's pid once it is free")
		}
		w.retry = min(max(2*w.retry, 10*time.Millisecond), time.Second)
		return w.retry
	case err != nil:
		s.o.Log.Warn().Err(err).Msg("record child in registry")
	}
	return 0
}

// unlock releases s.mu, then writes the record when the held set changed
// under it (heldSet.commit).
func (s *session) unlock() {
	if err := s.commit(s.reg); err != nil {
		s.o.Log.Warn().Err(err).Msg("record the session's files")
	}
}

// tryWriteRecord writes w unless a later state is written already, without
// waiting: errWriting while another write is under way, a
// *registry.LockError while another process holds the registry's lock.
func (s *session) tryWriteRecord(w *recordWrite) error { return s.records.tryWrite(s.reg, w) }

// removeRecord removes rec, the session's record, once any write under way
// is done; none is written after it.
func (s *session) removeRecord(rec *registry.Record) {
	if err := s.records.remove(s.reg, rec); err != nil {
		s.o.Log.Warn().Err(err).Msg("remove record")
	}
}

// warnFS warns, once a run, that l is held where other machines cannot
// see its flock: they see only its marker and heartbeat.
func (s *session) warnFS(l *marker.Hold) {
	if s.warnedFS || (!l.NoFlock && l.LocalFlock == "") {
		return
	}
	s.warnedFS = true
	lease := "--heartbeat is 0: other machines can never prove this run's marker stale"
	if s.o.Heartbeat > 0 {
		lease = fmt.Sprintf("heartbeat every %s: after a crash, other machines wait %s", s.o.Heartbeat, 3*time.Duration(heartbeatSeconds(s.o.Heartbeat))*time.Second)
	}
	if l.NoFlock {
		s.o.Log.Warn().Str("file", l.File).Msg("the filesystem has no flock: the file is held by its marker alone, judged by the verdict ladder; " + lease)
		return
	}
	s.o.Log.Warn().Str("file", l.File).Str("fs", l.LocalFlock).Msg("this filesystem's flock does not reach other machines: the file is held by its marker too, judged by the verdict ladder; " + lease)
}

// heartbeat is the job that refreshes every marker's mtime each interval.
func (s *session) heartbeat(every time.Duration) supervise.Job {
	lost := map[string]bool{}
	return supervise.Job{After: every, Every: every, Run: func(now time.Time) time.Duration {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, l := range s.locks {
			s.beat(l, now, lost)
		}
		return 0
	}}
}

// beat refreshes l's marker. A marker lost to another session is said
// once, loudly, and no longer touched: two writers may now run.
func (s *session) beat(l *marker.Hold, now time.Time, lost map[string]bool) {
	if lost[l.File] {
		return
	}
	err := l.Touch(now)
	var le *marker.LostError
	switch {
	case errors.As(err, &le):
		lost[l.File] = true
		s.o.Log.Error().Str("file", l.File).Msg("another session took the file over: this run's heartbeat looked silent for 3 intervals (a stalled or suspended machine?) or its marker was removed; two writers may now run")
	case err != nil:
		s.o.Log.Warn().Err(err).Msg("heartbeat")
	}
}

func heartbeatSeconds(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return int((d + time.Second - 1) / time.Second)
}

func openRegistry() (*registry.Registry, error) {
	dir, err := registry.Dir()
	if err != nil {
		return nil, err
	}
	return registry.Open(dir)
}

// childEnv is the environment unchanged, plus the session's variables. An
// inherited file and marker from an outer padrun go when this run guards
// nothing.
func childEnv(env []string, pid int, agent string, files []string) []string {
	out := make([]string, 0, len(env)+5)
	hasAgent := false
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "PAD_SESSION_PID", "PADRUN_VERSION", "PADRUN_SESSION_FILE", "PADRUN_MARKER", "PADRUN_PI_NAME",
			"PADRUN_SESSIONS", "PADRUN_STOP", "PADRUN_WAIT", "PADRUN_CONTINUE", "PADRUN_CONTROL": // an outer run's, for its companion
			continue
		case "PAD_AGENT":
			hasAgent = true
		}
		out = append(out, kv)
	}
	out = append(out, fmt.Sprintf("PAD_SESSION_PID=%d", pid), "PADRUN_VERSION="+Version)
	if agent != "" && !hasAgent {
		out = append(out, "PAD_AGENT="+agent)
	}
	if len(files) > 0 {
		out = append(out, "PADRUN_SESSION_FILE="+files[0], "PADRUN_MARKER="+marker.Path(files[0]))
	}
	return out
}
