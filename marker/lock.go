package marker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/padrun/padrun/marker/ident"
	"github.com/padrun/padrun/marker/safefile"
)

// Hold is a held session file: its lock file is flocked (where the
// filesystem has flock) and its marker published.
type Hold struct {
	File   string
	marker Marker
	g      guard
	env    env
	// NoFlock: the filesystem has no flock; the file is held by its marker
	// alone, judged by the ladder, and the lock file is never unlinked.
	NoFlock bool
	// LocalFlock names the filesystem (fuse.sshfs, nfs, ...) when its flock
	// reaches only this machine: the flock is held, but other machines see
	// only the marker, so it was published under the break file protocol
	// and judged by the ladder even though the flock was free.
	LocalFlock string
	// written is the marker's bytes as this hold last published them: the
	// marker is still ours while the file holds exactly them.
	written []byte
	// inodes are the session file's own inodes that l holds (inode.go);
	// deleted those of them whose deletion Deleted has said.
	inodes  []inodeKey
	deleted []inodeKey
}

// TryAcquire takes file for the session that m describes, without
// waiting. A refusal is a *HeldError.
func TryAcquire(file string, m Marker, self ident.Self) (*Hold, error) {
	return system().acquire(context.Background(), file, m, self, false)
}

// Acquire is TryAcquire that waits while a live process holds the lock,
// until ctx is done; then it returns ctx's cause. Other refusals come at once.
func Acquire(ctx context.Context, file string, m Marker, self ident.Self) (*Hold, error) {
	return system().acquire(ctx, file, m, self, true)
}

// acquire takes file, with wait waiting for a busy lock until ctx is done.
func (e env) acquire(ctx context.Context, file string, m Marker, self ident.Self, wait bool) (*Hold, error) {
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return nil, fmt.Errorf("marker: create folder of %s: %w", file, err)
	}
	for {
		g, err := e.take(ctx, lockPath(file), wait)
		switch {
		case err == errBusy:
			return nil, busy(file, self)
		case err == errCanceled:
			return nil, context.Cause(ctx)
		case err != nil:
			if held := othersLock(file, err); held != nil {
				return nil, held
			}
			return nil, err
		}
		if g.reach == noHolder {
			return e.acquireByMarker(file, m, self, g)
		}
		inos, err := holdInodes(file, self)
		if err != nil {
			g.release() // Best effort: leave no lock file behind.
			return nil, err
		}
		if g.reach == thisMachine {
			l, err := e.acquireByMarker(file, m, self, g)
			return l.withInodes(inos, err)
		}
		now := time.Now()
		stale, err := takeover(file, self, now, false)
		var b []byte
		if err == nil {
			b, err = e.publish(file, &m, stale != nil, now)
		}
		if err == errChanged {
			dropInodes(inos)
			g.close()
			continue
		}
		if err != nil {
			dropInodes(inos)
			g.release() // Best effort: leave no lock file behind.
			return nil, err
		}
		reclaim(stale, self)
		return &Hold{File: file, marker: m, g: g, env: e, written: b, inodes: inos}, nil
	}
}

// SetChild records the child, and the process group and session it leads
// (0: none of its own), in the marker with an atomic rewrite.
func (l *Hold) SetChild(pid int, token string, pgid, sid int) error {
	l.marker.ChildPid, l.marker.ChildStartToken = pid, ident.Token(token)
	l.marker.ChildPgid, l.marker.ChildSid = pgid, sid
	return l.republish()
}

// SetSessionID records the harness's session id in the marker with an
// atomic rewrite; an empty or unchanged id writes nothing.
func (l *Hold) SetSessionID(id string) error {
	if id == "" || id == l.marker.SessionID {
		return nil
	}
	l.marker.SessionID = id
	return l.republish()
}

// republish rewrites the hold's marker atomically from l.marker.
func (l *Hold) republish() error {
	b := l.marker.encode()
	if err := l.env.write(Path(l.File), b, true, time.Now()); err != nil {
		return err
	}
	l.written = b
	return nil
}

// ours tells whether b, a marker's content, is this hold's marker: the
// bytes it last wrote, or else, parsed, its nonce.
func (l *Hold) ours(b []byte) bool {
	return safefile.Ours(b, l.written, func(b []byte) bool {
		m, err := parse(b)
		return err == nil && m.Nonce == l.marker.Nonce
	})
}

// Fd is the lock file's descriptor, for a child to inherit as flock(1)'s does:
// the kernel then keeps the file locked while any process holding it lives.
// ok is false where the file is held by its marker alone.
func (l *Hold) Fd() (fd uintptr, ok bool) {
	if l.NoFlock {
		return 0, false
	}
	return safefile.Fd(l.g.h), true
}

// Keep drops the lock but leaves the marker in place: processes of the
// session outlived padrun's attempts to end them, and the next acquirer must
// find them through it (its orphan check) rather than a free file.
// The lock file stays too: a survivor that inherited the lock still holds it.
func (l *Hold) Keep() error {
	l.releaseInodes()
	l.g.close()
	return nil
}

// Touch refreshes the marker's mtime: the heartbeat. It touches only a
// marker that is still ours (by nonce), never the marker of whoever took
// the file over: that is a *LostError.
func (l *Hold) Touch(now time.Time) error {
	ours, err := safefile.TouchIf(Path(l.File), maxSize, now, l.ours)
	switch {
	case errors.Is(err, os.ErrNotExist) || err == nil && !ours:
		return &LostError{l.File}
	case err != nil:
		return fmt.Errorf("marker: heartbeat %s: %w", Path(l.File), err)
	}
	return nil
}

// Release removes the marker if it is still ours (nonce), then unlinks the
// lock file while still holding it, then drops the lock.
func (l *Hold) Release() error {
	var first error
	if b, _, err := safefile.ReadBounded(Path(l.File), maxSize); err == nil && l.ours(b) {
		if err := os.Remove(Path(l.File)); err != nil && !errors.Is(err, os.ErrNotExist) {
			first = fmt.Errorf("marker: remove %s: %w", Path(l.File), err)
		}
	}
	l.releaseInodes()
	l.g.path = lockPath(l.File) // moved with its folder (MoveTo)
	if err := l.g.release(); err != nil && first == nil {
		first = fmt.Errorf("marker: release %s: %w", lockPath(l.File), err)
	}
	return first
}

// acquireByMarker takes file where its flock cannot keep other machines
// out: on a filesystem without flock (g is not locked), or one whose flock
// reaches only this machine (g is locked). Its lock file is never
// unlinked. Takeovers are serialised by the break file (breakfile.go), and
// the marker is read and judged again under it: a padrun marker is judged
// by its padrun's liveness, or from another machine by its heartbeat, as no
// lock can tell.
func (e env) acquireByMarker(file string, m Marker, self ident.Self, g guard) (*Hold, error) {
	tag, err := e.takeBreak(file, self)
	if err != nil {
		g.close()
		return nil, err
	}
	defer dropBreak(breakPath(file), tag)
	now := time.Now()
	stale, err := takeover(file, self, now, true)
	var b []byte
	if err == nil {
		b, err = e.publish(file, &m, stale != nil, now)
	}
	if err != nil {
		g.close()
		if err == errChanged {
			return nil, &HeldError{File: file, Kind: HeldPolled, Judgement: appeared()}
		}
		return nil, err
	}
	reclaim(stale, self)
	return &Hold{File: file, marker: m, g: g, env: e, NoFlock: g.reach == noHolder, LocalFlock: g.fs, written: b}, nil
}
