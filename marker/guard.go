package marker

// Taking the guard: the one step that opens F.live.lock, flocks it and
// says how far that flock reaches. Acquire and Unlock both start with it.

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/padrun/padrun/marker/ident"
	"github.com/padrun/padrun/marker/safefile"
)

// env is what the hold asks of the system. Production code uses system();
// tests pass in a filesystem without flock, one whose flock stays on this
// machine, or fixed temp names.
type env struct {
	tryLock  func(safefile.Handle) error                       // the non-blocking flock
	scope    func(safefile.Handle) (localOnly bool, fs string) // whether a flock reaches only this machine
	tempName func() string                                     // a fresh name for a file on its way (ident.TempName)
}

// system is the env of a real run.
func system() env { return env{safefile.TryLock, flockScope, ident.TempName} }

// reach says which holders a taken guard's flock keeps out.
type reach int

const (
	// everyHolder: the kernel's flock keeps out every other holder; the
	// lock file is unlinked, still locked, at release.
	everyHolder reach = iota
	// thisMachine: the flock keeps out this machine's holders only; others
	// are judged by the marker under the break file, and the lock file,
	// which they open too, is never unlinked.
	thisMachine
	// noHolder: the filesystem has no flock; the file is held by its
	// marker alone, judged under the break file, and the lock file is
	// never unlinked (an open(O_CREAT) that races an unlink made through
	// another mount fails with ENOENT on FUSE).
	noHolder
)

// guard is a taken lock file: its handle, and how far its flock reaches.
type guard struct {
	h     safefile.Handle
	path  string
	reach reach
	fs    string // the filesystem, where reach is thisMachine
}

// blind says the flock cannot see every holder: the marker and the break
// file decide.
func (g guard) blind() bool { return g.reach != everyHolder }

// release drops the guard: a lock file every holder sees locked is unlinked
// while still locked; any other is only closed.
func (g guard) release() error {
	if g.blind() {
		safefile.Close(g.h)
		return nil
	}
	return releaseLock(g.h, g.path)
}

// close drops the guard and leaves its lock file, for a retry.
func (g guard) close() { safefile.Close(g.h) }

// errBusy says a live process holds the lock, and take was not to wait.
var errBusy = errors.New("marker: lock busy")

// take opens the lock file at path and flocks it, with wait waiting while
// it is busy until ctx is done (then errCanceled). It retries when the path
// no longer names the inode it locked: its last holder released and
// unlinked it (gofrs/flock#8). errBusy when a live process holds it;
// open's errors are returned as openLock says them.
func (e env) take(ctx context.Context, path string, wait bool) (guard, error) {
	for {
		h, err := openLock(path)
		if err != nil {
			return guard{}, err
		}
		switch err := e.lockWait(ctx, h, wait); err {
		case nil:
		case safefile.ErrNoLocking:
			return guard{h: h, path: path, reach: noHolder}, nil
		case safefile.ErrBusy:
			safefile.Close(h)
			return guard{}, errBusy
		case errCanceled:
			return guard{}, err // the waiting goroutine owns h now
		default:
			safefile.Close(h)
			return guard{}, fmt.Errorf("marker: lock %s: %w", path, err)
		}
		if !safefile.SameFile(h, path) {
			safefile.Close(h) // released and unlinked by its last holder: take the new one
			continue
		}
		g := guard{h: h, path: path}
		if local, fs := e.scope(h); local {
			g.reach, g.fs = thisMachine, fs
		}
		return g, nil
	}
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

// errCanceled ends a wait for a lock that its context ended.
var errCanceled = errors.New("marker: wait canceled")

// lockWait flocks h, with wait waiting until ctx is done.
func (e env) lockWait(ctx context.Context, h safefile.Handle, wait bool) error {
	err := e.tryLock(h)
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
