package marker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/padrun/padrun/marker/ident"
	"github.com/padrun/padrun/marker/safefile"
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
)

// Waitable reports whether waiting may end the refusal.
func (k HeldKind) Waitable() bool { return k == HeldBusy || k == HeldPolled }

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
		replace, err := takeover(file, self, now, false)
		var b []byte
		if err == nil {
			b, err = publish(file, &m, replace, now)
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
		return &Lock{File: file, marker: m, h: h, written: b, inodes: inos}, nil
	}
}

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
	e.Judgement = Judgement{ident.Unknown, "its lock " + filepath.Base(lp) + " belongs to " + e.User + ", which this user cannot open or judge"}
	if held, pid, err := lockHolder(lp); err == nil && held {
		e.LockPid = pid
		e.Judgement = Judgement{ident.Alive, fmt.Sprintf("user %s's pid %d holds its lock %s", name, pid, filepath.Base(lp))}
	}
	if m, err := Read(file); err == nil {
		e.Holder = m // a marker readable to all says more
	}
	return e
}

// othersMarker is the refusal for a marker that another user wrote and this
// one cannot read: its holder cannot be judged, but it may yet go away.
func othersMarker(file string, err error) *HeldError {
	e, _ := othersFile(file, MarkerPath(file), err)
	if e != nil {
		e.Judgement = Judgement{ident.Unknown, "its marker " + filepath.Base(MarkerPath(file)) + " belongs to " + e.User + ", which this user cannot read"}
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
	reason := "its lock " + filepath.Base(lockPath(file)) + " is held by a live process"
	if m, err := Read(file); err == nil {
		e.Holder = m
		if j := verdictOf(m.Proc(), self, time.Now()); j.Verdict == ident.Alive {
			reason = j.Reason + ", and " + reason
		} else if pids := ident.LockHolders(lockPath(file)); len(pids) > 0 {
			// Its padrun is gone: a process of its session inherited the lock.
			reason = "orphan: padrun pid " + strconv.Itoa(m.Pid) + " is gone but " + names(pids) +
				" of its session still " + runs(pids) + " and holds its lock " + filepath.Base(lockPath(file))
		} else if j, ok := leftover(m, self); !ok {
			reason = j.Reason + ", and " + reason // a holder still exiting, or one padrun cannot see
		}
	}
	e.Judgement = Judgement{ident.Alive, reason}
	return e
}

// takeover judges the marker at file while holding its lock. It returns
// whether a marker is there to replace, or a *HeldError. blind says the
// flock cannot see every holder (none, or only this machine's).
func takeover(file string, self ident.Self, now time.Time, blind bool) (replace bool, err error) {
	m, err := Read(file)
	var ue *UnreadableError
	switch {
	case err == errMarkerAbsent:
		return false, nil
	case errors.As(err, &ue):
		return false, &HeldError{File: file, Kind: HeldUnreadable, Judgement: Judgement{ident.Unknown, "unreadable: " + ue.Why}}
	case err != nil:
		if held := othersMarker(file, err); held != nil {
			return false, held
		}
		return false, err // padrun's own failure: reported as itself
	}
	refuse := func(j Judgement) error {
		kind := HeldStuck
		if j.Verdict == ident.Alive || m.HeartbeatSeconds > 0 {
			kind = HeldPolled
		}
		return &HeldError{File: file, Kind: kind, Holder: m, Judgement: j}
	}
	if m.Tool != Tool {
		j, err := judge(m.Proc(), self, now)
		if err != nil {
			return false, fmt.Errorf("marker: judge the holder of %s: %w", file, err)
		}
		if j.Verdict != ident.Dead {
			return false, refuse(j)
		}
		return true, nil
	}
	// A padrun marker whose lock is free: its padrun is gone, or still
	// exiting after SIGKILL, before the kernel killed its child.
	j, err := judge(m.Proc(), self, now)
	if err != nil {
		return false, fmt.Errorf("marker: judge the holder of %s: %w", file, err)
	}
	if j.Verdict != ident.Dead {
		if !blind {
			j.Reason = "its padrun released the lock but " + j.Reason
		}
		if j.Verdict == ident.Alive && !blind {
			j.Reason += " (still exiting?)"
		}
		return false, refuse(j)
	}
	if child, ok := m.Child(); ok {
		j, err := judge(child, self, now)
		if err != nil {
			return false, fmt.Errorf("marker: judge the child in %s: %w", MarkerPath(file), err)
		}
		if j.Verdict != ident.Dead {
			j.Reason = "orphan: padrun pid " + strconv.Itoa(m.Pid) + " is gone but its child " + j.Reason
			return false, refuse(j)
		}
	}
	if j, ok := leftover(m, self); !ok {
		return false, refuse(j)
	}
	return true, nil
}

// UnreadableError says a marker exists but cannot be judged.
type UnreadableError struct {
	Path string
	Why  string
}

func (e *UnreadableError) Error() string { return "marker: " + e.Path + ": " + e.Why }

// Read reads and parses the marker of file, bounded to MaxSize. A missing
// marker is errMarkerAbsent; one that cannot be judged (a symlink, not a
// regular file, too large, not a marker), an *UnreadableError; any other
// error is padrun's own.
func Read(file string) (*Marker, error) {
	var (
		path  string
		b     []byte
		mtime time.Time
		err   error
	)
	for _, path = range markerPaths(file) {
		if b, mtime, err = safefile.ReadBounded(path, MaxSize); !absent(err) {
			break
		}
	}
	if absent(err) {
		err = os.ErrNotExist
	}
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, errMarkerAbsent
	case errors.Is(err, safefile.ErrSymlink), errors.Is(err, safefile.ErrNotRegular), errors.Is(err, safefile.ErrTooLarge):
		return nil, &UnreadableError{path, err.Error()}
	case err != nil:
		// Out of descriptors or memory, an I/O error: padrun's own
		// failure, never a fact about the marker's holder.
		return nil, fmt.Errorf("marker: read %s: %w", path, err)
	}
	m, err := Parse(b)
	if err != nil {
		return nil, &UnreadableError{path, strings.TrimPrefix(err.Error(), "marker: ")}
	}
	m.ModTime = mtime
	return m, nil
}

// publish writes m as file's marker and returns the bytes it wrote. It
// first removes the temp files that dead writers left in the folder.
func publish(file string, m *Marker, replace bool, now time.Time) ([]byte, error) {
	ident.ReclaimTemps(filepath.Dir(file))
	m.SessionFile = file
	b := m.encode()
	if replace {
		// The stale marker judged may lie under the other name.
		if err := os.Remove(markerPaths(file)[1]); err != nil && !absent(err) {
			return nil, fmt.Errorf("marker: remove %s: %w", markerPaths(file)[1], err)
		}
	}
	return b, write(MarkerPath(file), b, replace, now)
}

// write makes the marker encoded as b visible whole at path: written to a
// temp file whose name never matches *.live.json, then linked (no marker
// there) or renamed into place. No fsync: a marker from before a crash is
// stale by its boot id. Its mtime, the first heartbeat, is now: the time of
// the judgement that let it in, on the clock that its later heartbeats use.
func write(path string, b []byte, replace bool, now time.Time) error {
	tmp := filepath.Join(filepath.Dir(path), tempName())
	if err := safefile.WriteNew(tmp, b); err != nil {
		return fmt.Errorf("marker: write %s: %w", tmp, err)
	}
	defer os.Remove(tmp) // Best effort: after a link, the temp name is left over.
	if err := safefile.Touch(tmp, now); err != nil {
		return fmt.Errorf("marker: stamp %s: %w", tmp, err)
	}
	if !replace {
		switch err := os.Link(tmp, path); {
		case err == nil:
			return nil
		case errors.Is(err, os.ErrExist):
			return errChanged // another tool wrote a marker meanwhile: judge it
		}
		// Filesystems without hard links: the lock serialises padruns.
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("marker: publish %s: %w", path, err)
	}
	return nil
}

// tempName is a fresh name for a marker on its way (ident.TempName): short
// whatever the marker's name, never matching *.live.json, and carrying its
// writer, so that a leftover of a padrun killed mid-publish is reclaimed.
// A variable: tests fix it to plant something at the temp path.
var tempName = ident.TempName

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

// LostError says a holder's marker was replaced or removed by another:
// after its heartbeat looked silent for 3 intervals (a stalled or
// suspended machine), or by unlock --force.
type LostError struct{ File string }

func (e *LostError) Error() string {
	return "marker: " + MarkerPath(e.File) + " is no longer ours: another session took " + e.File + " over"
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
	replace, err := takeover(file, self, now, true)
	var b []byte
	if err == nil {
		b, err = publish(file, &m, replace, now)
	}
	if err != nil {
		drop()
		if err == errChanged {
			return nil, &HeldError{File: file, Kind: HeldPolled, Judgement: Judgement{ident.Unknown, "a marker appeared meanwhile"}}
		}
		return nil, err
	}
	return &Lock{File: file, marker: m, h: h, NoFlock: localFS == "", LocalFlock: localFS, written: b}, nil
}

// breakLeaseSeconds is how long a takeover may take, as a heartbeat
// interval: a break file of another machine (whose taker cannot be probed)
// is dead once its mtime is older than three of them.
const breakLeaseSeconds = 10

// breakTag says who holds the break file, for the verdict ladder.
type breakTag struct {
	Pid           int         `json:"pid"`
	StartToken    ident.Token `json:"startToken,omitempty"`
	BootID        string      `json:"bootId,omitempty"`
	MachineID     string      `json:"machineId,omitempty"`
	Hostname      string      `json:"hostname,omitempty"`
	PidNamespace  ident.Token `json:"pidNamespace,omitempty"`
	TimeNamespace ident.Token `json:"timeNamespace,omitempty"`
}

// takeBreak creates F.live.break exclusively and returns what it wrote
// there, for dropBreak. A break file whose taker the ladder proves dead is
// cleared and tried once more; any other is a waitable refusal: another
// process is taking the file over.
func takeBreak(file string, self ident.Self) ([]byte, error) {
	brk := breakPath(file)
	tag, _ := json.Marshal(breakTag{self.Pid, ident.Token(self.StartToken), self.BootID, self.MachineID,
		self.Hostname, ident.Token(self.PidNamespace), ident.Token(self.TimeNamespace)})
	for tries := 0; ; tries++ {
		err := safefile.WriteNew(brk, tag)
		if err == nil {
			return tag, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("marker: create %s: %w", brk, err)
		}
		why := "another process is taking the file over (" + filepath.Base(brk) + ")"
		if tries == 0 {
			j, judged, ok := judgeBreak(brk, self)
			if ok && j.Verdict == ident.Dead {
				clearDeadBreak(brk, judged) // its taker is dead; try once more
				continue
			}
			if ok {
				why += ": " + j.Reason
			}
		}
		return nil, &HeldError{File: file, Kind: HeldPolled,
			Judgement: Judgement{ident.Unknown, "no flock reaches the other holders here, and " + why}}
	}
}

// dropBreak removes this taker's own break file brk at the end of its
// takeover (or a clearer's own .clear file) if it still holds tag: never
// one another made after judging this one dead (which takes a silent lease
// on another machine).
func dropBreak(brk string, tag []byte) {
	if b, _, err := safefile.ReadBounded(brk, MaxSize); err == nil && bytes.Equal(b, tag) {
		os.Remove(brk) // Best effort: the next taker judges what is left.
	}
}

// clearDeadBreak removes the break file brk, judged dead, if it still
// holds dead, and never another taker's. Clearers are serialised by
// brk+".clear", created exclusively with a tag of their own: under it brk
// is read again, so of two takers that judged one dead file, the later
// finds the file the first made since and leaves it. A .clear file older
// than clearLease is a dead clearer's; one that is fresh is waited for,
// briefly (what it guards takes a read and an unlink), then brk is left for
// the next try. Where the .clear file cannot be made at all (a name too
// long for it), brk is read again and removed without it.
func clearDeadBreak(brk string, dead []byte) {
	lock := brk + ".clear"
	own := []byte(tempName()) // a tag no other clearer writes
	for start := time.Now(); ; time.Sleep(time.Millisecond) {
		err := safefile.WriteNew(lock, own)
		if err == nil {
			defer dropBreak(lock, own)
			break
		}
		if !errors.Is(err, os.ErrExist) {
			break
		}
		if b, mtime, err := safefile.ReadBounded(lock, MaxSize); err == nil && time.Since(mtime) > clearLease {
			takeAside(lock, b) // a dead clearer's
		}
		if time.Since(start) > clearWait {
			return
		}
	}
	dropBreak(brk, dead)
}

// takeAside removes path if it still holds b. It renames path aside first:
// of several removers, one rename wins and the others find nothing; what it
// took that is not b (made since) goes back, unless yet another is there.
func takeAside(path string, b []byte) {
	aside := filepath.Join(filepath.Dir(path), tempName())
	if os.Rename(path, aside) != nil {
		return // gone: taken by another
	}
	if got, _, err := safefile.ReadBounded(aside, MaxSize); err == nil && !bytes.Equal(got, b) {
		os.Link(aside, path) // Best effort: it fails only when a new one is there.
	}
	os.Remove(aside) // Best effort: a temp name, ignored by every reader.
}

// clearLease is how old a .clear file must be to be a dead clearer's: as
// for a break file of another machine, three lease intervals.
const clearLease = 3 * breakLeaseSeconds * time.Second

// clearWait is how long clearDeadBreak waits for a live clearer.
const clearWait = 100 * time.Millisecond

// judgeBreak runs the ladder on a break file's taker, its mtime serving as
// a heartbeat of breakLeaseSeconds; it returns the bytes it judged.
func judgeBreak(brk string, self ident.Self) (Judgement, []byte, bool) {
	b, mtime, err := safefile.ReadBounded(brk, MaxSize)
	var t breakTag
	if err != nil || json.Unmarshal(b, &t) != nil {
		return Judgement{}, nil, false
	}
	return verdictOf(Proc{Pid: t.Pid, StartToken: string(t.StartToken), BootID: t.BootID, MachineID: t.MachineID,
		Hostname: t.Hostname, PidNamespace: string(t.PidNamespace), TimeNamespace: string(t.TimeNamespace), Heartbeat: mtime,
		HeartbeatSeconds: breakLeaseSeconds}, self, time.Now()), b, true
}

// breakPath is the file that serialises takeovers where flock is missing.
func breakPath(file string) string { return file + ".live.break" }

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
