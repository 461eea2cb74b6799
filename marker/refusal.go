package marker

// The refusals: what says a session file is held, and by whom, for people.

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"

	"github.com/padrun/padrun/marker/ident"
)

// HeldError is the refusal: file is held by another session, or its holder
// cannot be judged.
type HeldError struct {
	File      string
	Kind      HeldKind
	Holder    *Marker // nil when there is no readable marker
	Judgement Judgement
	// User names another user whose lock file this one cannot open, as
	// "user NAME (uid N)"; LockPid is the pid that holds that lock, when
	// the kernel's lock table says.
	User    string
	LockPid int
}

// HeldKind says what may end a refusal: the holder's going away, or only a
// person.
type HeldKind int

const (
	// HeldStuck: the holder cannot be judged and no heartbeat will expire;
	// only a person can resolve it.
	HeldStuck HeldKind = iota
	// HeldBusy: a live process holds the kernel lock; a waiter blocks on it.
	HeldBusy
	// HeldPolled: the holder may yet go away (alive, a heartbeat that may
	// expire, another user's lock), with no lock to block on: a waiter polls.
	HeldPolled
	// HeldUnreadable: the marker cannot be read; unlock --force clears it.
	HeldUnreadable
	// HeldOuter: the holder is the run's own outer session (its
	// PAD_SESSION_PID), which outlives the run.
	HeldOuter
	// HeldOutside: the holder is a harness's process that padrun did not
	// start (docs/spec.md §5 rule 9); a waiter polls until it ends.
	HeldOutside
)

// Waitable reports whether waiting may end the refusal.
func (k HeldKind) Waitable() bool { return k == HeldBusy || k == HeldPolled || k == HeldOutside }

func (e *HeldError) Error() string {
	return "marker: " + e.File + " is in use by another session (" + e.Judgement.String() + ")"
}

// IsHeld reports whether err is a refusal because a session file is held.
func IsHeld(err error) bool {
	var h *HeldError
	return errors.As(err, &h)
}

// UnsafeError says a marker or lock path is something padrun will not touch:
// a symlink, or not a regular file.
type UnsafeError struct {
	Path string
	Why  string
}

func (e *UnsafeError) Error() string { return "marker: " + e.Path + " " + e.Why }

var (
	errChanged      = errors.New("marker: replaced meanwhile")
	errMarkerAbsent = errors.New("marker: none")
)

// othersLock is the refusal for a lock file that another user owns and
// this one cannot open (mode 0600): another user's session holds the file,
// or held it. It cannot be flocked, so a waiter polls. Nil when err is
// anything else, or the lock file is this user's own.
func othersLock(file string, err error) *HeldError {
	lp := lockPath(file)
	e, name := othersFile(file, lp, err)
	if e == nil {
		return nil
	}
	e.Judgement = othersOf(OthersLock, filepath.Base(lp), e.User, name, 0)
	if held, pid, err := lockHolder(lp); err == nil && held {
		e.LockPid = pid
		e.Judgement = othersOf(OthersLockHeld, filepath.Base(lp), e.User, name, pid)
	}
	if m, err := Read(file); err == nil {
		e.Holder = m // a marker readable to all says more
	}
	return e
}

// othersMarker is the refusal for a marker that another user wrote and this
// one cannot read: its holder cannot be judged, but it may yet go away.
func othersMarker(file string, err error) *HeldError {
	e, name := othersFile(file, Path(file), err)
	if e != nil {
		e.Judgement = othersOf(OthersMarker, filepath.Base(Path(file)), e.User, name, 0)
	}
	return e
}

// othersFile starts the refusal for path, which err says this user may not
// open, when another uid owns it; nil otherwise. It also returns the
// owner's name.
func othersFile(file, path string, err error) (*HeldError, string) {
	uid, ok := owner(path)
	if !errors.Is(err, os.ErrPermission) || !ok || uid == os.Geteuid() {
		return nil, ""
	}
	name := strconv.Itoa(uid)
	if u, err := user.LookupId(name); err == nil {
		name = u.Username
	}
	return &HeldError{File: file, Kind: HeldPolled, User: fmt.Sprintf("user %s (uid %d)", name, uid)}, name
}

// busy describes the live holder of a busy lock from its marker, read
// without the lock: it is for people only and decides nothing.
func busy(file string, self ident.Self) *HeldError {
	e := &HeldError{File: file, Kind: HeldBusy}
	if m, err := Read(file); err == nil {
		e.Holder = m
	}
	e.Judgement = busyOf(file, e.Holder, self)
	return e
}

// LostError says a holder's marker was replaced or removed by another:
// after its heartbeat looked silent for 3 intervals (a stalled or
// suspended machine), or by unlock --force.
type LostError struct{ File string }

func (e *LostError) Error() string {
	return "marker: " + Path(e.File) + " is no longer ours: another session took " + e.File + " over"
}

// unreadableError says a marker exists but cannot be judged.
type unreadableError struct {
	Path string
	Why  string
}

func (e *unreadableError) Error() string { return "marker: " + e.Path + ": " + e.Why }
