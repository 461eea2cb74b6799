package wrapper

import (
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/padrun/padrun/marker"
)

// The hold follows the file (docs/spec.md §14). The kernel's locks follow inodes: a
// lock file moved with its folder stays locked, and so does a session file
// renamed while held (its own inode is flocked too). Names do not: after a
// rename, or a symlinked folder re-pointed, a name the harness writes by
// may name a file no lock covers. So padrun watches every folder on the way
// to each held file and each name it guards (inotify, where there is one),
// and at each change, at once:
//
//   - a lock file moved with its folder: the lock now holds the folder's new
//     place, and its marker is rewritten to name it;
//   - a held file renamed: its new name is held too (its marker and lock),
//     as is the old one, which the harness may still write by;
//   - a guarded name that now names another file (a folder renamed and made
//     again, a symlink re-pointed): that file is held too, once its folder
//     exists (padrun never makes a folder the user moved away);
//   - a file that appeared under a held name: its inode is held too.
//
// Each is said on stderr, loudly. When one cannot be held because another
// session holds it, the child would write a file that session holds: the
// child is stopped at once (SIGKILL, as for a refused switch inside the
// harness) and padrun exits 75 with the refusal. Fail closed.

// followDelay is how long the child runs before its files are watched,
// when each one exists and its inode is held: a child gone by then costs
// no inotify instance at all, and what moved meanwhile is found by the
// follower's first check, from the held descriptors. A file not there yet
// is watched at once: its creation must be seen, to hold its inode before
// it can be renamed.
const followDelay = 5 * time.Millisecond

// follow starts following the run's files (after followDelay, see there);
// stop ends it and may be called again. Call them holding nothing.
func (s *session) follow() (stop func()) {
	var mu sync.Mutex
	var f *follower
	stopped := false
	delay := followDelay
	s.mu.Lock()
	if slices.ContainsFunc(s.locks, func(l *marker.Hold) bool { return !l.Inode() }) {
		delay = 0
	}
	s.mu.Unlock()
	start := func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return
		}
		nf, err := startFollower(s.recheck, func() {
			s.watchOverflowed("the watch of the held files' folders", "checked again the way to every held file and guarded name")
		})
		if err != nil {
			s.o.Log.Warn().Err(err).Msg("cannot watch the session files for renames")
		}
		if nf == nil {
			return
		}
		s.mu.Lock()
		s.follower = nf
		s.mu.Unlock()
		f = nf
	}
	t := time.NewTimer(0)
	t.Stop()
	if delay == 0 {
		start() // before the child: its first file is seen created
	} else {
		t = time.AfterFunc(delay, start)
	}
	return sync.OnceFunc(func() {
		t.Stop()
		mu.Lock()
		stopped = true
		nf := f
		mu.Unlock()
		if nf != nil {
			s.mu.Lock()
			s.follower = nil
			s.mu.Unlock()
			nf.stop()
		}
	})
}

// recheck applies the policy above to what changed, then says which
// paths to watch next.
func (s *session) recheck() []string {
	s.mu.Lock()
	defer s.unlock()
	if s.rec == nil {
		return nil // ended
	}
	for _, l := range slices.Clone(s.locks) {
		s.followLock(l)
	}
	for _, n := range slices.Clone(s.names) {
		s.followName(n)
	}
	paths := s.files()
	wd, _ := workingDir() // Best effort: a relative name is then not watched.
	for _, n := range s.names {
		if !filepath.IsAbs(n) && wd != "" {
			n = wd + string(filepath.Separator) + n // its symlinks are for the watch to follow
		}
		paths = append(paths, n)
	}
	return paths
}

// followLock follows l's lock file and inodes to where they are now.
func (s *session) followLock(l *marker.Hold) {
	if l.Gone() {
		s.o.Log.Warn().Str("file", l.File).Msg("the lock file of a held session file was removed (its folder deleted?): this run holds the file again as soon as its folder is there")
		s.forget(l)
		return
	}
	for _, at := range l.Deleted() {
		e := s.o.Log.Warn().Str("file", l.File)
		if at != "" {
			e = e.Str("contents", at)
		}
		e.Msg("a held session file was deleted while held (an rm, or the harness's own cleanup): what the run had written is gone from that name; copy it from contents before this run ends, while padrun still has it open")
	}
	now, inodeNames := l.Names()
	if now != "" && now != l.File {
		old := l.File
		if err := l.MoveTo(now); err != nil {
			s.o.Log.Warn().Err(err).Msg("rewrite the marker of a moved session file")
		}
		s.o.Log.Warn().Str("file", old).Str("now", now).Msg("a folder of a held session file was moved: its lock and marker moved with it, and this run holds it at its new place; the old name is held again once its folder is back")
	}
	for _, n := range inodeNames {
		if n == "" || n == l.File || s.heldLocked(n) {
			continue
		}
		if s.hold(n, "its renamed session file") {
			s.o.Log.Warn().Str("file", l.File).Str("now", n).Msg("a held session file was renamed: this run holds it under its new name too")
		}
	}
	switch took, err := l.LockInode(s.self); {
	case err != nil:
		s.refuseMove(l.File, err, "a new file under a held name")
	case took:
		s.o.Log.Info().Str("file", l.File).Msg("this run holds the new session file's own inode too")
	}
}

// followName holds what the guarded name n names now, once its folder
// exists.
func (s *session) followName(n string) {
	file, err := CanonicalFile(n)
	if err != nil || s.heldLocked(file) {
		return
	}
	if fi, err := os.Stat(filepath.Dir(file)); err != nil || !fi.IsDir() {
		return // held once its folder is back: it is watched
	}
	if s.hold(file, "the file a guarded name now names") {
		s.o.Log.Warn().Str("name", n).Str("now", file).Msg("a guarded name names a file this run did not hold (a folder of it was moved, made again or re-pointed): this run holds that file too")
	}
}

// hold takes file for the run while it runs and reports whether it did; a
// refusal stops the child.
func (s *session) hold(file, what string) bool {
	if err := s.take(file, ""); err != nil {
		s.refuseMove(file, err, what)
		return false
	}
	return true
}

// refuseMove stops the child when err says another session holds file:
// its writes would meet that session's. Other errors are warnings.
func (s *session) refuseMove(file string, err error, what string) {
	if !marker.IsHeld(err) {
		s.o.Log.Warn().Err(err).Str("file", file).Msg("cannot hold " + what)
		return
	}
	s.o.Log.Error().Str("file", file).Msg(what + " is held by another session: stopping the child, so that two writers never share it")
	s.stopHarness(err)
}

// forget drops l, whose lock file is gone, but keeps following its name.
func (s *session) forget(l *marker.Hold) {
	s.remove(l)
	if err := l.Release(); err != nil {
		s.o.Log.Warn().Err(err).Msg("release")
	}
}

// followNames are the names the run guards, to be resolved again at each
// change: as given (relative ones from the working folder as it is then)
// and as first resolved.
func followNames(given, resolved []string) []string {
	names := slices.Concat(given, resolved)
	slices.Sort(names)
	return slices.Compact(names)
}

// unfollow stops holding the names that now name file, which the run
// releases: the harness left it. The caller holds s.mu.
func (s *session) unfollow(file string) {
	s.names = slices.DeleteFunc(s.names, func(n string) bool {
		f, err := CanonicalFile(n)
		return n == file || err == nil && f == file
	})
}
