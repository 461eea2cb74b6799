package registry

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/padrun/padrun/marker/safefile"
)

// LockWait bounds the wait for the folder's lock: a stuck holder must not
// keep padrun, and the session files it holds, waiting forever.
const LockWait = 5 * time.Second

// LockError is a folder lock still held when the wait ran out.
type LockError struct {
	Path   string
	Holder string // "pid 1234 (flock)", or "" when it cannot be seen
	Waited time.Duration
}

// holderPid is the pid in a holder's name, or "".
func (e *LockError) holderPid() string {
	pid, _, _ := strings.Cut(strings.TrimPrefix(e.Holder, "pid "), " ")
	return pid
}

func (e *LockError) Error() string {
	who := "another process"
	if e.Holder != "" {
		who = e.Holder
	}
	return fmt.Sprintf("registry: %s is held by %s: gave up after %s", e.Path, who, e.Waited)
}

// Hint says what to do about it.
func (e *LockError) Hint() string {
	end := "end it (see: cat /proc/locks)"
	if pid := e.holderPid(); pid != "" {
		end = "end it (kill " + pid + ")"
	}
	return "a process that holds the registry's lock this long is stuck: " + end + ", or set " + EnvDir +
		" to another folder; padrun never breaks the lock"
}

// locked runs f under an exclusive flock on <dir>/.lock, waiting for it at
// most wait (0: not at all), and no longer than ctx lives.
func (r *Registry) locked(ctx context.Context, wait time.Duration, f func() error) error {
	path := filepath.Join(r.Dir, ".lock")
	h, err := safefile.OpenLock(path)
	if err != nil {
		return fmt.Errorf("registry: open %s: %w", path, err)
	}
	defer safefile.Close(h)
	if err := r.waitLock(ctx, h, path, wait); err != nil {
		return err
	}
	return f()
}

// waitLock takes the lock, polling while another process holds it: flock
// cannot be given a deadline or be interrupted by a context. A free lock
// costs one try.
func (r *Registry) waitLock(ctx context.Context, h safefile.Handle, path string, bound time.Duration) error {
	start := time.Now()
	delay := time.Millisecond
	for told := false; ; told = true {
		err := safefile.TryLock(h)
		if !errors.Is(err, safefile.ErrBusy) {
			if err != nil {
				return fmt.Errorf("registry: lock %s: %w", path, err)
			}
			return nil
		}
		waited := time.Since(start)
		if waited >= bound {
			return &LockError{Path: path, Holder: lockHolder(h), Waited: bound}
		}
		if !told && r.OnWait != nil {
			r.OnWait(lockHolder(h))
		}
		t := time.NewTimer(min(delay, bound-waited))
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("registry: wait for %s: %w", path, context.Cause(ctx))
		case <-t.C:
		}
		delay = min(2*delay, 25*time.Millisecond)
	}
}
