package marker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/padrun/padrun/marker/ident"
	"github.com/padrun/padrun/marker/safefile"
)

// State is what status says of a session file.
type State string

const (
	Free    State = "free"    // no holder
	Held    State = "held"    // a live holder
	Stale   State = "stale"   // a marker whose holder is proven dead
	Unknown State = "unknown" // a holder that cannot be judged
)

// Status is the state of one session file, with its holder and the ladder's reasoning.
type Status struct {
	File    string        `json:"file"`
	State   State         `json:"state"`
	Holder  *Marker       `json:"holder,omitempty"`
	Verdict ident.Verdict `json:"-"` // written as "verdict" where Reason is set
	Reason  string        `json:"reason,omitempty"`
	LockPid int           `json:"lockPid,omitempty"`
	// LocalFlock names the filesystem when its flock reaches only this
	// machine: the marker alone says whether another machine holds the file.
	LocalFlock string    `json:"localFlock,omitempty"`
	CheckedAt  time.Time `json:"checkedAt"`
}

// MarshalJSON writes the verdict only where the ladder gave one.
func (s Status) MarshalJSON() ([]byte, error) {
	type fields Status
	v := ""
	if s.Reason != "" {
		v = s.Verdict.String()
	}
	return json.Marshal(struct {
		fields
		Verdict string `json:"verdict,omitempty"`
	}{fields(s), v})
}

// Free reports whether the file could be taken now.
func (s Status) Free() bool { return s.State == Free || s.State == Stale }

// Inspect says whether file is held, without taking its lock: even a shared
// lock would make a concurrent acquire fail. Where the kernel's lock table
// cannot be read, the marker's verdict decides.
func Inspect(file string, self ident.Self, now time.Time) Status {
	st := Status{File: file, CheckedAt: now}
	if local, fs := pathScope(filepath.Dir(file)); local {
		st.LocalFlock = fs
	}
	held, pid, err := lockHolder(lockPath(file))
	if err != nil {
		st.State, st.Reason = Unknown, err.Error()
		return st
	}
	if held {
		st.LockPid = pid
		e := busy(file, self)
		st.Holder = e.Holder
		st.State, st.Verdict, st.Reason = Held, e.Judgement.Verdict, e.Judgement.Reason
		return st
	}
	if e := inodeLockHolder(file, self); e != nil {
		// Held under another name: the file was renamed or moved while held.
		st.Holder, st.State, st.Verdict, st.Reason = e.Holder, Held, e.Judgement.Verdict, e.Judgement.Reason
		return st
	}
	return judgeMarker(st, self)
}

// judgeMarker fills st from the marker alone, as if its lock were free.
func judgeMarker(st Status, self ident.Self) Status {
	file, now := st.File, st.CheckedAt
	stale, err := takeover(file, self, now, st.LocalFlock != "")
	var he *HeldError
	switch {
	case errors.As(err, &he):
		st.Holder, st.Verdict, st.Reason = he.Holder, he.Judgement.Verdict, he.Judgement.Reason
		st.State = Unknown
		if he.Judgement.Verdict == ident.Alive {
			st.State = Held
		}
	case err != nil:
		st.State, st.Reason = Unknown, err.Error()
	case stale != nil:
		st.Holder, st.State, st.Verdict = stale, Stale, ident.Dead
		st.Reason = staleOf(stale, self, now).Reason
	default:
		st.State = Free
	}
	return st
}

// Unlock removes the marker of file when its holder is proven dead, or,
// with force, when it cannot be judged. It takes the lock to decide, and
// never removes a marker whose holder is alive.
func Unlock(file string, self ident.Self, force bool) (Status, error) {
	return system().unlock(file, self, force)
}

// unlock is Unlock in e. Where the filesystem has no flock it fails, as it
// always did: the next acquire judges the marker under the break file.
func (e env) unlock(file string, self ident.Self, force bool) (Status, error) {
	now := time.Now()
	st := Status{File: file, CheckedAt: now}
	g, err := e.take(context.Background(), lockPath(file), false)
	switch {
	case errors.Is(err, os.ErrNotExist):
		// The folder is gone: nothing to unlock.
		st.State = Free
		return st, nil
	case err == errBusy:
		return Inspect(file, self, now), nil
	case err != nil:
		return st, err
	case g.reach == noHolder:
		g.close()
		return st, fmt.Errorf("marker: lock %s: %w", g.path, safefile.ErrNoLocking)
	}
	defer g.release()
	if g.reach == thisMachine {
		// Takers on other machines do not see this flock: judge and
		// remove under the break file, as they take over under it.
		st.LocalFlock = g.fs
		tag, err := e.takeBreak(file, self)
		if err != nil {
			var he *HeldError
			if !errors.As(err, &he) {
				return st, err
			}
			st.State, st.Verdict, st.Reason = Unknown, he.Judgement.Verdict, he.Judgement.Reason
			return st, nil
		}
		defer dropBreak(breakPath(file), tag)
	}
	st = judgeMarker(st, self)
	if st.State == Stale || (force && st.State == Unknown) {
		for _, p := range markerPaths(file) {
			if err := os.Remove(p); err != nil && !absent(err) {
				return st, fmt.Errorf("marker: remove %s: %w", p, err)
			}
		}
		if st.State == Stale {
			reclaim(st.Holder, self)
		}
		st.State = Free
	}
	return st, nil
}
