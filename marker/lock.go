package marker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/padrun/padrun/marker/ident"
	"github.com/padrun/padrun/marker/safefile"
)

// Lock is a held session file: its lock is flocked and its marker published.
type Lock struct {
	File   string
	marker Marker
	h      safefile.Handle
	// NoFlock: the filesystem has no flock; the file is held by its marker
	// alone, judged by the ladder, and the lock file is never unlinked.
	NoFlock bool
	// LocalFlock names the filesystem (fuse.sshfs, nfs, ...) when its flock
	// reaches only this machine: the flock is held, but other machines see
	// only the marker, so it was published under the break file protocol
	// and judged by the ladder even though the flock was free.
	LocalFlock string
	// written is the marker's bytes as this lock last published them: the
	// marker is still ours while the file holds exactly them.
	written []byte
	// inodes are the session file's own inodes that l holds (inode.go).
	inodes []inodeKey
}

// tryLock is the non-blocking flock; tests stand in a filesystem without it.
var tryLock = safefile.TryLock

// lockScope tells whether a flock reaches only this machine; tests stand
// in such a filesystem.
var lockScope = flockScope

// TryAcquire takes file for the session that m describes, without
// waiting. A refusal is a *HeldError.
func TryAcquire(file string, m Marker, self ident.Self) (*Lock, error) {
	return acquire(context.Background(), file, m, self, false)
}

// Acquire is TryAcquire that waits while a live process holds the lock,
// until ctx is done; then it returns ctx's cause. Other refusals come at once.
func Acquire(ctx context.Context, file string, m Marker, self ident.Self) (*Lock, error) {
	return acquire(ctx, file, m, self, true)
}

// acquire takes file, with wait waiting for a busy lock until ctx is done.
func acquire(ctx context.Context, file string, m Marker, self ident.Self, wait bool) (*Lock, error) {
	lp := lockPath(file)
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return nil, fmt.Errorf("marker: create folder of %s: %w", file, err)
	}
	for {
		h, err := openLock(lp)
		if err != nil {
			if held := othersLock(file, err); held != nil {
				return nil, held
			}
			return nil, err
		}
		switch err := lockWait(ctx, h, wait); err {
		case nil:
		case safefile.ErrNoLocking:
			return acquireByMarker(file, m, self, h, "")
		case safefile.ErrBusy:
			safefile.Close(h)
			return nil, busy(file, self)
		case errCanceled:
			return nil, context.Cause(ctx) // the waiting goroutine owns h now
		default:
			safefile.Close(h)
			return nil, fmt.Errorf("marker: lock %s: %w", lp, err)
		}
		if !safefile.SameFile(h, lp) {
			safefile.Close(h) // released and unlinked by its last holder: take the new one
			continue
		}
		local, fs := lockScope(h)
		inos, err := holdInodes(file, self)
		if err != nil {
			if local {
				safefile.Close(h)
			} else {
				releaseLock(h, lp) // Best effort: leave no lock file behind.
			}
			return nil, err
		}
		if local {
			l, err := acquireByMarker(file, m, self, h, fs)
			return l.withInodes(inos, err)
		}
		now := time.Now()
		stale, err := takeover(file, self, now, false)
		var b []byte
		if err == nil {
			b, err = publish(file, &m, stale != nil, now)
		}
		if err == errChanged {
			dropInodes(inos)
			safefile.Close(h)
			continue
		}
		if err != nil {
			dropInodes(inos)
			releaseLock(h, lp) // Best effort: leave no lock file behind.
			return nil, err
		}
		reclaim(stale, self)
		return &Lock{File: file, marker: m, h: h, written: b, inodes: inos}, nil
	}
}

// SetChild records the child, and the process group and session it leads
// (0: none of its own), in the marker with an atomic rewrite.
func (l *Lock) SetChild(pid int, token string, pgid, sid int) error {
	l.marker.ChildPid, l.marker.ChildStartToken = pid, ident.Token(token)
	l.marker.ChildPgid, l.marker.ChildSid = pgid, sid
	return l.republish()
}

// SetSessionID records the harness's session id in the marker with an
// atomic rewrite; an empty or unchanged id writes nothing.
func (l *Lock) SetSessionID(id string) error {
	if id == "" || id == l.marker.SessionID {
		return nil
	}
	l.marker.SessionID = id
	return l.republish()
}

// republish rewrites the lock's marker atomically from l.marker.
func (l *Lock) republish() error {
	b := l.marker.encode()
	if err := write(MarkerPath(l.File), b, true, time.Now()); err != nil {
		return err
	}
	l.written = b
	return nil
}

// ours tells whether b, a marker's content, is this lock's marker: the
// bytes it last wrote, or else, parsed, its nonce.
func (l *Lock) ours(b []byte) bool {
	if l.written != nil && bytes.Equal(b, l.written) {
		return true
	}
	m, err := Parse(b)
	return err == nil && m.Nonce == l.marker.Nonce
}

// Fd is the lock's descriptor, for a child to inherit as flock(1)'s does:
// the kernel then keeps the file locked while any process holding it lives.
// ok is false where the file is held by its marker alone.
func (l *Lock) Fd() (fd uintptr, ok bool) {
	if l.NoFlock {
		return 0, false
	}
	return safefile.Fd(l.h), true
}

// Keep drops the lock but leaves the marker in place: processes of the
// session outlived padrun's attempts to end them, and the next acquirer must
// find them through it (its orphan check) rather than a free file.
// The lock file stays too: a survivor that inherited the lock still holds it.
func (l *Lock) Keep() error {
	l.releaseInodes()
	safefile.Close(l.h)
	return nil
}

// Touch refreshes the marker's mtime: the heartbeat. It touches only a
// marker that is still ours (by nonce), never the marker of whoever took
// the file over: that is a *LostError.
func (l *Lock) Touch(now time.Time) error {
	ours, err := safefile.TouchIf(MarkerPath(l.File), MaxSize, now, l.ours)
	switch {
	case errors.Is(err, os.ErrNotExist) || err == nil && !ours:
		return &LostError{l.File}
	case err != nil:
		return fmt.Errorf("marker: heartbeat %s: %w", MarkerPath(l.File), err)
	}
	return nil
}

// Release removes the marker if it is still ours (nonce), then unlinks the
// lock file while still holding it, then drops the lock.
func (l *Lock) Release() error {
	var first error
	if b, _, err := safefile.ReadBounded(MarkerPath(l.File), MaxSize); err == nil && l.ours(b) {
		if err := os.Remove(MarkerPath(l.File)); err != nil && !errors.Is(err, os.ErrNotExist) {
			first = fmt.Errorf("marker: remove %s: %w", MarkerPath(l.File), err)
		}
	}
	l.releaseInodes()
	if l.NoFlock || l.LocalFlock != "" {
		safefile.Close(l.h) // never unlink a lock file others do not see locked
		return first
	}
	if err := releaseLock(l.h, lockPath(l.File)); err != nil && first == nil {
		first = fmt.Errorf("marker: release %s: %w", lockPath(l.File), err)
	}
	return first
}

// openLock opens the lock file, refusing a symlink or a non-regular file.
func openLock(path string) (safefile.Handle, error) {
	h, err := safefile.OpenLock(path)
	switch {
	case errors.Is(err, safefile.ErrSymlink), errors.Is(err, safefile.ErrNotRegular):
		return h, &UnsafeError{path, err.Error()}
	case err != nil:
		return h, fmt.Errorf("marker: open %s: %w", path, err)
	}
	return h, nil
}

// releaseLock unlinks the lock file while it is still locked, so that no
// lock file is left behind, then drops the lock. Every acquirer checks the
// path still names the inode it locked.
func releaseLock(h safefile.Handle, path string) error {
	var err error
	if safefile.SameFile(h, path) {
		err = os.Remove(path)
	}
	safefile.Close(h)
	return err
}

// acquireByMarker takes file where its flock cannot keep other machines
// out: on a filesystem without flock (localFS empty; h is not locked), or
// one whose flock reaches only this machine (localFS names it; h is
// locked). Its lock file is never unlinked. Takeovers are serialised by an
// exclusive-create F.live.break
// file, and the marker is read and judged again under it: a padrun marker
// is judged by its padrun's liveness, or from another machine by its
// heartbeat, as no lock can tell.
func acquireByMarker(file string, m Marker, self ident.Self, h safefile.Handle, localFS string) (*Lock, error) {
	// The lock file is never unlinked: without flock it is not locked, and
	// on a FUSE mount an open(O_CREAT) that races an unlink made through
	// another mount fails with ENOENT.
	drop := func() { safefile.Close(h) }
	tag, err := takeBreak(file, self)
	if err != nil {
		drop()
		return nil, err
	}
	defer dropBreak(breakPath(file), tag)
	now := time.Now()
	stale, err := takeover(file, self, now, true)
	var b []byte
	if err == nil {
		b, err = publish(file, &m, stale != nil, now)
	}
	if err != nil {
		drop()
		if err == errChanged {
			return nil, &HeldError{File: file, Kind: HeldPolled, Judgement: Judgement{ident.Unknown, "a marker appeared meanwhile"}}
		}
		return nil, err
	}
	reclaim(stale, self)
	return &Lock{File: file, marker: m, h: h, NoFlock: localFS == "", LocalFlock: localFS, written: b}, nil
}

// errCanceled ends a wait for a lock that its context ended.
var errCanceled = errors.New("marker: wait canceled")

// lockWait flocks h, with wait waiting until ctx is done.
func lockWait(ctx context.Context, h safefile.Handle, wait bool) error {
	err := tryLock(h)
	if err != safefile.ErrBusy || !wait {
		return err
	}
	res := make(chan error, 1)
	go func() { res <- safefile.Lock(h) }()
	select {
	case err := <-res:
		return err
	case <-ctx.Done():
		// h stays open under the blocked flock: closing it here could
		// let its number be reused under us. The waiter closes it.
		go func() {
			<-res
			safefile.Close(h)
		}()
		return errCanceled
	}
}
