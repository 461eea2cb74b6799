package marker

// The verdict ladder of docs/spec.md §5, and the takeover judgement built on
// it: every judgement of a holder is made here, as a Judgement (verdict,
// rung, facts), and worded by one function, word.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/padrun/padrun/marker/cgroupdir"
	"github.com/padrun/padrun/marker/ident"
)

// Rung is the rung of the verdict ladder (docs/spec.md §5) that decided a
// judgement; 0 for the judgements beyond it (the orphan check, the
// refusals that no marker decides).
type Rung int

const (
	_ Rung = iota // 0: no rung
	// rungUnreadable (1): no pid recorded, or no marker to parse: unknown.
	rungUnreadable
	// rungOtherMachine (2): machine ids differ (hostnames, where either
	// side lacks one): dead only once its heartbeat is silent for three
	// intervals, else unknown.
	rungOtherMachine
	// rungOtherBoot (3): boot ids differ: dead.
	rungOtherBoot
	// rungOtherNamespace (4): another pid or time namespace (§14): as rung
	// 2, never dead by its pid.
	rungOtherNamespace
	// rungPid (5): kill(pid, 0) says there is no such process (dead) or
	// cannot say (unknown).
	rungPid
	// rungStartToken (6): a start token recorded: equal alive; different,
	// a zombie or a thread dead; unreadable unknown.
	rungStartToken
	// rungNoToken (7): none recorded: alive, unverified; a zombie dead.
	rungNoToken
)

// Case is what a judgement says beyond its rung: the takeover's view of a
// padrun marker and the session it records.
type Case int

const (
	// Plain: the holder's own verdict.
	Plain Case = iota
	// Unreadable: the marker cannot be judged (Facts.Err says why).
	Unreadable
	// Released: a padrun marker whose lock is free, its padrun not proven
	// dead (still exiting?).
	Released
	// OrphanChild: the padrun is gone (Facts.Padrun), its child not.
	OrphanChild
	// StaleChild: a dead padrun, with its child's judgement (Facts.Child).
	StaleChild
	// Cgroup*, Group*: the padrun and its child are gone, but its session's
	// cgroup cannot be read, or holds processes (Facts.Procs); its child's
	// process group or session cannot be listed, or holds processes.
	CgroupUnread
	CgroupProcs
	GroupUnlisted
	GroupProcs
	// LockBusy: a live process holds the lock (Facts.Of: its marker's
	// holder, where that says more); LockOrphan: the padrun is gone and a
	// process of its session inherited the lock (Facts.Procs).
	LockBusy
	LockOrphan
	// InodeHeld: another process holds the session file's own inode, as
	// Facts.At (Facts.Named: under which name).
	InodeHeld
	// OthersLock, OthersLockHeld, OthersMarker: another user's lock file
	// (held by Facts.LockPid) or marker, which this user cannot open.
	OthersLock
	OthersLockHeld
	OthersMarker
	// BreakBusy: another taker holds the break file (Facts.Of: its
	// judgement, where it could be read); MarkerAppeared: a marker was
	// published meanwhile.
	BreakBusy
	MarkerAppeared
	// InUseLock: a harness's own in-use lock (Facts.Name) names a writer,
	// Facts.Procs, of harness Facts.Command, judged in Facts.Of.
	// WriterUnverified, WriterReused, WriterBefore: that writer's pid
	// Facts.Pid, against the lock's Facts.Written (Facts.Started: when the
	// pid started, where it could be read).
	InUseLock
	WriterUnverified
	WriterReused
	WriterBefore
	// EtcdHeld, EtcdLeaseless, EtcdForeign: the session's key in etcd,
	// Facts.Key, is held by a padrun (lease Facts.Lease, machine
	// Facts.Machine), by a key no lease keeps, or by a value that is not
	// padrun's.
	EtcdHeld
	EtcdLeaseless
	EtcdForeign
)

// Named says under which name another process holds a session file's inode.
type Named int

const (
	thisName Named = iota // the name asked for
	hardLink              // another name of the same inode
	moved                 // the file was renamed or moved while held
)

// Judgement is a verdict, with what decided it and its wording for people.
type Judgement struct {
	Verdict ident.Verdict
	// Reason is the judgement in words: word(j) for the ladder's own; the
	// refusals that no marker decides (another user's lock, a busy lock)
	// say theirs.
	Reason string
	Rung   Rung
	Case   Case
	Facts  Facts
}

// Facts are what the ladder saw.
type Facts struct {
	Pid   int    // the process judged
	Token string // the start token recorded for it
	// Found is what kill(pid, 0) and its start token said (rungs 5 to 7).
	Found ident.Finding
	// SameBoot, SameMachine: the ids that matched ours (rungs 5 to 7).
	SameBoot, SameMachine bool
	// Boot and SelfBoot: its boot id and ours (rung 3).
	Boot, SelfBoot string
	// Machine is its machine id where both sides have one; Host its host
	// name (rung 2).
	Machine, Host string
	// Namespace says which namespace differs (rung 4).
	Namespace string
	// Interval and Age: its heartbeat's interval (0: none) and age (rungs
	// 2 and 4).
	Interval, Age time.Duration

	// Padrun is the pid of a padrun marker's padrun, where the judgement
	// is of its session.
	Padrun int
	// Procs names the session's processes still running, Count how many;
	// Cgroup, Pgid and Sid say where they were found.
	Procs     string
	Count     int
	Cgroup    string
	Pgid, Sid int
	Err       string // why the marker or the session cannot be judged
	// Of is the judgement this one builds on: the child's (StaleChild),
	// the marker's holder (LockBusy), the break file's taker (BreakBusy).
	Of *Judgement

	// Name is the guard file named (the lock, marker or break file's base
	// name); User and UserName the other user who owns it.
	Name, User, UserName string
	// LockPid holds the lock; At, Named and Command say where and who
	// holds the session file's inode (InodeHeld).
	LockPid int
	At      string
	Named   Named
	Command string

	// Written is when an in-use lock was written, Started when its
	// writer's pid started (InUseLock and its writer's cases).
	Written, Started time.Time
	// Key and Lease: an etcd key and its lease, in hex (Etcd*).
	Key, Lease string
}

func (j Judgement) String() string { return j.Verdict.String() + ": " + j.Reason }

// worded is j with its Reason: word(j).
func (j Judgement) worded() Judgement {
	j.Reason = word(j)
	return j
}

// word says a judgement of the ladder for people.
func word(j Judgement) string {
	f := j.Facts
	gone := "orphan: padrun pid " + strconv.Itoa(f.Padrun) + " and its child are gone but "
	switch j.Case {
	case Unreadable:
		return "unreadable: " + f.Err
	case Released:
		s := "its padrun released the lock but " + wordRung(j)
		if j.Verdict == ident.Alive {
			s += " (still exiting?)"
		}
		return s
	case OrphanChild:
		return "orphan: padrun pid " + strconv.Itoa(f.Padrun) + " is gone but its child " + wordRung(j)
	case StaleChild:
		return wordRung(j) + "; child " + f.Of.Reason
	case LockBusy:
		s := "its lock " + f.Name + " is held by a live process"
		if f.Of != nil {
			s = f.Of.Reason + ", and " + s
		}
		return s
	case LockOrphan:
		return "orphan: padrun pid " + strconv.Itoa(f.Padrun) + " is gone but " + f.Procs + " of its session still " +
			runs(f.Count) + " and holds its lock " + f.Name
	case InodeHeld:
		return wordInode(f)
	case OthersLock:
		return "its lock " + f.Name + " belongs to " + f.User + ", which this user cannot open or judge"
	case OthersLockHeld:
		return "user " + f.UserName + "'s pid " + strconv.Itoa(f.LockPid) + " holds its lock " + f.Name
	case OthersMarker:
		return "its marker " + f.Name + " belongs to " + f.User + ", which this user cannot read"
	case BreakBusy:
		s := "no flock reaches the other holders here, and another process is taking the file over (" + f.Name + ")"
		if f.Of != nil {
			s += ": " + f.Of.Reason
		}
		return s
	case MarkerAppeared:
		return "a marker appeared meanwhile"
	case InUseLock:
		return f.Procs + " has the session open (its own in-use lock " + f.Name + ", which " + f.Command + " only warns of): " + f.Of.Reason
	case WriterUnverified:
		return "pid " + strconv.Itoa(f.Pid) + " exists (unverified: its start time cannot be read)"
	case WriterReused:
		return "pid " + strconv.Itoa(f.Pid) + " was reused: it started at " + f.Started.Format("15:04:05.000") +
			", after its lock was written at " + f.Written.Format("15:04:05.000")
	case WriterBefore:
		return "pid " + strconv.Itoa(f.Pid) + " started before its lock was written"
	case EtcdHeld:
		machine := short(f.Machine)
		if machine == "" {
			machine = "unknown"
		}
		return "held in etcd under " + f.Key + " (lease " + f.Lease + ", machine " + machine + ")"
	case EtcdLeaseless:
		return "held in etcd under " + f.Key + " by a key with no lease, which no live padrun leaves (padrun unlock --etcd removes it)"
	case EtcdForeign:
		return "held in etcd under " + f.Key + " by a value that is not padrun's (lease " + f.Lease + ")"
	case CgroupUnread:
		return gone + "its cgroup cannot be read: " + f.Err
	case CgroupProcs:
		return gone + f.Procs + " of its session still " + runs(f.Count) + " (cgroup " + f.Cgroup + ")"
	case GroupUnlisted:
		return gone + "its processes cannot be listed: " + f.Err
	case GroupProcs:
		where := "process group " + strconv.Itoa(f.Pgid)
		if f.Pgid <= 0 {
			where = "session " + strconv.Itoa(f.Sid)
		}
		return gone + f.Procs + " of its session still " + runs(f.Count) + " (its child's " + where + ")"
	}
	return wordRung(j)
}

// wordInode says who holds a session file's own inode.
func wordInode(f Facts) string {
	const s = "the session file itself is locked by "
	switch {
	case f.Padrun > 0:
		w := s + "padrun pid " + strconv.Itoa(f.Padrun) + ", which holds it as " + f.At
		switch f.Named {
		case hardLink:
			w += " (another name of it: a hard link)"
		case moved:
			w += " (renamed or moved while held)"
		}
		if f.LockPid != f.Padrun {
			w += "; pid " + strconv.Itoa(f.LockPid) + " of its session holds the lock"
		}
		return w
	case f.LockPid > 0:
		w := s + "pid " + strconv.Itoa(f.LockPid)
		if f.Command != "" {
			w += " (" + f.Command + ")"
		}
		return w
	}
	return s + "another process"
}

// wordRung says what the rung that decided j saw.
func wordRung(j Judgement) string {
	f := j.Facts
	pid := "pid " + strconv.Itoa(f.Pid)
	switch j.Rung {
	case rungUnreadable:
		return "unreadable: no pid recorded"
	case rungOtherMachine:
		why := "another machine (host " + f.Host + ")"
		if f.Machine != "" {
			why = "another machine (machine id " + short(f.Machine) + ", host " + orNone(f.Host) + ")"
		}
		return wordHeartbeat(j, why)
	case rungOtherBoot:
		return pid + " ran in a previous boot (boot id " + short(f.Boot) + ", now " + short(f.SelfBoot) + ")"
	case rungOtherNamespace:
		return wordHeartbeat(j, f.Namespace+", "+pid+" cannot be checked")
	}
	s := pid + probed[f.Found.Fact]
	switch f.Found.Fact {
	case ident.NoPid:
		s = "no pid recorded"
	case ident.Reused:
		s += " (start time " + f.Found.Start + ", recorded " + f.Token + ")"
	}
	if j.Verdict == ident.Dead {
		return s
	}
	var same []string
	if f.SameBoot {
		same = append(same, "same boot")
	}
	if f.SameMachine {
		same = append(same, "same machine")
	}
	if len(same) == 0 {
		return s
	}
	return s + ", " + strings.Join(same, ", ")
}

// probed words what ident.Probe saw of a pid, after "pid N".
var probed = [...]string{
	ident.Gone:            " is gone",
	ident.Unchecked:       " cannot be checked",
	ident.StartUnreadable: " exists but its start time cannot be read",
	ident.Unverified:      " exists (unverified: no start time recorded)",
	ident.Thread:          " is a thread, not a process",
	ident.Zombie:          " is a zombie",
	ident.Reused:          " was reused",
	ident.Matches:         " start time matches",
	ident.Impossible:      " cannot name a process (negative, or above the kernel's pid_max): never probed",
}

// wordHeartbeat says why, then what the heartbeat of a holder whose pid
// cannot be checked says.
func wordHeartbeat(j Judgement, why string) string {
	f := j.Facts
	switch {
	case f.Interval <= 0:
		return why + ", no heartbeat"
	case j.Verdict == ident.Dead:
		return fmt.Sprintf("%s, heartbeat silent for %s (interval %s)", why, round(f.Age), f.Interval)
	}
	return fmt.Sprintf("%s, heartbeat fresh (%s ago, interval %s)", why, round(f.Age), f.Interval)
}

// verdictOf runs the verdict ladder on h. Boot and machine ids are
// compared normalised (ident.NormalizeID).
// Local judges a process of this machine, namespace and boot that was
// recorded with pid and its start token (empty when none was): rungs 5 to
// 7, as for a marker's holder.
func Local(pid int, token string) Judgement {
	return verdictOf(proc{ID: ident.ID{Pid: pid, StartToken: ident.Token(token)}}, ident.Self{}, time.Now())
}

func verdictOf(h proc, self ident.Self, now time.Time) Judgement {
	j, _ := judge(h, self, now)
	return j
}

// judge is verdictOf, and the error of padrun's own (out of descriptors or
// memory) that left the verdict unknown, which callers that decide report
// as itself.
func judge(h proc, self ident.Self, now time.Time) (Judgement, error) {
	j := Judgement{Facts: Facts{Pid: h.Pid, Token: string(h.StartToken)}}
	if h.Pid == 0 {
		j.Verdict, j.Rung = ident.Unknown, rungUnreadable
		return j.worded(), nil
	}
	h.BootID, h.MachineID = ident.NormalizeID(h.BootID), ident.NormalizeID(h.MachineID)
	self.BootID, self.MachineID = ident.NormalizeID(self.BootID), ident.NormalizeID(self.MachineID)
	if otherMachine(h, self) {
		j.Rung, j.Facts.Host = rungOtherMachine, h.Hostname
		if h.MachineID != "" && self.MachineID != "" {
			j.Facts.Machine = h.MachineID
		}
		return remote(j, h, now), nil
	}
	if h.BootID != "" && self.BootID != "" && h.BootID != self.BootID {
		j.Verdict, j.Rung, j.Facts.Boot, j.Facts.SelfBoot = ident.Dead, rungOtherBoot, h.BootID, self.BootID
		return j.worded(), nil
	}
	// A pid of another pid namespace names another process here, and a
	// start token read in another time namespace is shifted by its
	// boottime offset: neither proves anything, alive or dead.
	if ns := ident.OtherNamespace(string(h.PidNamespace), string(h.TimeNamespace), string(self.PidNamespace), string(self.TimeNamespace)); ns != "" {
		j.Rung, j.Facts.Namespace = rungOtherNamespace, ns
		return remote(j, h, now), nil
	}
	found, err := ident.Probe(h.Pid, string(h.StartToken))
	j.Verdict, j.Facts.Found = found.Verdict, found
	j.Facts.SameBoot = h.BootID != "" && h.BootID == self.BootID
	j.Facts.SameMachine = h.MachineID != "" && h.MachineID == self.MachineID
	switch {
	case found.Fact == ident.Gone || found.Fact == ident.Unchecked || found.Fact == ident.Impossible:
		j.Rung = rungPid
	case h.StartToken != "":
		j.Rung = rungStartToken
	default:
		j.Rung = rungNoToken
	}
	return j.worded(), err
}

// otherMachine tells whether h ran on another machine than self.
func otherMachine(h proc, self ident.Self) bool {
	switch {
	case h.MachineID != "" && self.MachineID != "":
		return h.MachineID != self.MachineID
	case h.BootID != "" && h.BootID == self.BootID:
	case h.Hostname != "" && self.Hostname != "" && h.Hostname != self.Hostname:
		return true
	}
	return false
}

// remote judges a holder whose pid cannot be checked from here: only its
// heartbeat, the marker's mtime, can prove it dead.
func remote(j Judgement, h proc, now time.Time) Judgement {
	j.Verdict = ident.Unknown
	if h.HeartbeatSeconds > 0 && !h.Heartbeat.IsZero() {
		j.Facts.Interval = time.Duration(h.HeartbeatSeconds) * time.Second
		j.Facts.Age = now.Sub(h.Heartbeat)
		if j.Facts.Age > 3*j.Facts.Interval {
			j.Verdict = ident.Dead
		}
	}
	return j.worded()
}

// takeover judges the marker at file while holding its lock. It returns
// the marker to replace (nil when there is none), or a *HeldError. blind
// says the flock cannot see every holder (none, or only this machine's).
func takeover(file string, self ident.Self, now time.Time, blind bool) (stale *Marker, err error) {
	m, err := Read(file)
	var ue *unreadableError
	switch {
	case err == errMarkerAbsent:
		return nil, nil
	case errors.As(err, &ue):
		j := Judgement{Verdict: ident.Unknown, Rung: rungUnreadable, Case: Unreadable, Facts: Facts{Err: ue.Why}}
		return nil, &HeldError{File: file, Kind: HeldUnreadable, Judgement: j.worded()}
	case err != nil:
		if held := othersMarker(file, err); held != nil {
			return nil, held
		}
		return nil, err // padrun's own failure: reported as itself
	}
	refuse := func(j Judgement) error {
		kind := HeldStuck
		if j.Verdict == ident.Alive || m.HeartbeatSeconds > 0 {
			kind = HeldPolled
		}
		return &HeldError{File: file, Kind: kind, Holder: m, Judgement: j}
	}
	if m.Tool != Tool {
		j, err := judge(m.proc(), self, now)
		if err != nil {
			return nil, fmt.Errorf("marker: judge the holder of %s: %w", file, err)
		}
		if j.Verdict != ident.Dead {
			return nil, refuse(j)
		}
		return m, nil
	}
	// A padrun marker whose lock is free: its padrun is gone, or still
	// exiting after SIGKILL, before the kernel killed its child.
	j, err := judge(m.proc(), self, now)
	if err != nil {
		return nil, fmt.Errorf("marker: judge the holder of %s: %w", file, err)
	}
	if j.Verdict != ident.Dead {
		if !blind {
			j.Case = Released
		}
		return nil, refuse(j.worded())
	}
	if child, ok := m.child(); ok {
		j, err := judge(child, self, now)
		if err != nil {
			return nil, fmt.Errorf("marker: judge the child in %s: %w", Path(file), err)
		}
		if j.Verdict != ident.Dead {
			j.Case, j.Facts.Padrun = OrphanChild, m.Pid
			return nil, refuse(j.worded())
		}
	}
	if j, ok := leftover(m, self); !ok {
		return nil, refuse(j)
	}
	return m, nil
}

// staleOf is the judgement of a padrun marker that takeover found stale,
// with its child's, for status.
func staleOf(m *Marker, self ident.Self, now time.Time) Judgement {
	j := verdictOf(m.proc(), self, now)
	if child, ok := m.child(); ok && m.Tool == Tool && j.Verdict == ident.Dead {
		c := verdictOf(child, self, now)
		j.Case, j.Facts.Of = StaleChild, &c
	}
	return j.worded()
}

// busyOf judges the live holder of file's busy lock from its marker m
// (nil when none is readable), read without the lock: for people only, it
// decides nothing.
func busyOf(file string, m *Marker, self ident.Self) Judgement {
	j := Judgement{Verdict: ident.Alive, Case: LockBusy, Facts: Facts{Name: filepath.Base(lockPath(file))}}
	if m == nil {
		return j.worded()
	}
	if h := verdictOf(m.proc(), self, time.Now()); h.Verdict == ident.Alive {
		j.Facts.Of = &h
	} else if pids := ident.LockHolders(lockPath(file)); len(pids) > 0 {
		// Its padrun is gone: a process of its session inherited the lock.
		j.Case, j.Facts.Padrun, j.Facts.Procs, j.Facts.Count = LockOrphan, m.Pid, names(pids), len(pids)
	} else if h, ok := leftover(m, self); !ok {
		j.Facts.Of = &h // a holder still exiting, or one padrun cannot see
	}
	return j.worded()
}

// inodeHeldOf judges the holder of a session file's own inode: padrun pid
// m.Pid holding it as at (m nil: no marker found), pid holding the lock.
func inodeHeldOf(m *Marker, at string, named Named, pid int) Judgement {
	j := Judgement{Verdict: ident.Alive, Case: InodeHeld, Facts: Facts{At: at, Named: named, LockPid: pid}}
	switch {
	case m != nil:
		j.Facts.Padrun = m.Pid
	case pid > 0:
		j.Facts.Command = ident.Command(pid)
	}
	return j.worded()
}

// othersOf judges a guard file (name) that another user owns and this one
// cannot open: unknown, or alive where the kernel says lockPid holds it.
func othersOf(c Case, name, user, userName string, lockPid int) Judgement {
	j := Judgement{Verdict: ident.Unknown, Case: c, Facts: Facts{Name: name, User: user, UserName: userName, LockPid: lockPid}}
	if c == OthersLockHeld {
		j.Verdict = ident.Alive
	}
	return j.worded()
}

// breakBusyOf judges a break file that another taker holds: of, its
// taker's judgement, where it could be read.
func breakBusyOf(name string, of *Judgement) Judgement {
	return Judgement{Verdict: ident.Unknown, Case: BreakBusy, Facts: Facts{Name: name, Of: of}}.worded()
}

// inUseSlack is how long before its in-use lock was written a writer may
// have started: start times are read to a clock tick, and a writer starts
// long before it opens a session. A process that started later still is
// not the writer: its pid was reused.
const inUseSlack = time.Second

// InUseWriter judges the writer pid that a harness's own in-use lock,
// written at written, names, as a holder is judged: dead when the pid is
// gone or a zombie (rungs 5 to 7, with no start token recorded), or when
// it names a process that started after the lock was written; started is
// when it started, ok false when that cannot be read.
func InUseWriter(pid int, written, started time.Time, ok bool) Judgement {
	if j := Local(pid, ""); j.Verdict != ident.Alive {
		return j
	}
	j := Judgement{Verdict: ident.Alive, Case: WriterBefore, Facts: Facts{Pid: pid, Written: written, Started: started}}
	switch {
	case !ok:
		j.Case = WriterUnverified
	case started.After(written.Add(inUseSlack)):
		j.Verdict, j.Case = ident.Dead, WriterReused
	}
	return j.worded()
}

// InUse is the judgement of a session file that a harness's own in-use
// lock (base name lock) holds, writer being its writer's: the writer's
// verdict, worded as the lock's.
func InUse(lock, harness string, writer Judgement) Judgement {
	j := Judgement{Verdict: writer.Verdict, Case: InUseLock,
		Facts: Facts{Pid: writer.Facts.Pid, Name: lock, Command: harness, Procs: ident.Name(writer.Facts.Pid), Of: &writer}}
	return j.worded()
}

// Etcd is the judgement of a session whose key in etcd is held: by a
// padrun (holder, with its lease in hex), by no lease (leaseless: no live
// padrun's, whatever it says), or by a value that is not padrun's (holder
// nil). Only a padrun's holder is alive; the others are unknown.
func Etcd(key, lease string, leaseless bool, holder *Marker) Judgement {
	j := Judgement{Verdict: ident.Unknown, Case: EtcdForeign, Facts: Facts{Key: key, Lease: lease}}
	switch {
	case leaseless:
		j.Case = EtcdLeaseless
	case holder != nil:
		j.Verdict, j.Case, j.Facts.Machine = ident.Alive, EtcdHeld, holder.MachineID
	}
	return j.worded()
}

// appeared judges a takeover that found a marker published meanwhile,
// where no flock serialises the takers.
func appeared() Judgement {
	return Judgement{Verdict: ident.Unknown, Case: MarkerAppeared}.worded()
}

// leftover checks, for a padrun marker whose padrun and child are gone,
// that no other process of that session still runs: none in its cgroup, or
// (without one) in the process group or session its child led. ok is false
// with a judgement naming the process when one runs, or saying why it cannot
// be told. It changes nothing: an empty cgroup left behind is removed by
// reclaim, once the marker is replaced or removed.
func leftover(m *Marker, self ident.Self) (j Judgement, ok bool) {
	sameBoot, samePids := local(m, self)
	if !sameBoot {
		return Judgement{}, true // another boot or machine: its processes are not ours to see
	}
	j.Facts = Facts{Padrun: m.Pid, Cgroup: m.Cgroup, Pgid: m.ChildPgid, Sid: m.ChildSid}
	found := func(c Case, v ident.Verdict, pids []int, err error) (Judgement, bool) {
		j.Case, j.Verdict, j.Facts.Procs, j.Facts.Count = c, v, names(pids), len(pids)
		if err != nil {
			j.Facts.Err = err.Error()
		}
		return j.worded(), false
	}
	// A cgroup is seen from every pid namespace of the machine; pids are not.
	if m.Cgroup != "" && filepath.IsAbs(m.Cgroup) {
		if _, err := os.Stat(m.Cgroup); err == nil {
			pids, err := cgroupdir.Procs(m.Cgroup)
			if err != nil {
				return found(CgroupUnread, ident.Unknown, nil, err)
			}
			if len(pids) > 0 {
				return found(CgroupProcs, ident.Alive, pids, nil)
			}
			return Judgement{}, true // the cgroup holds every process of the session
		}
	}
	if !samePids {
		return Judgement{}, true
	}
	// A process that started before the session cannot be of it, but a
	// start token read in another time namespace is shifted: no floor then.
	since := string(m.StartToken)
	if ident.OtherNamespace("", string(m.TimeNamespace), "", string(self.TimeNamespace)) != "" {
		since = ""
	}
	pids, err := ident.GroupProcs(m.ChildPgid, m.ChildSid, since)
	if err != nil {
		return found(GroupUnlisted, ident.Unknown, nil, err)
	}
	if len(pids) > 0 {
		return found(GroupProcs, ident.Alive, pids, nil)
	}
	return Judgement{}, true
}

// local tells whether m was written on this machine in this boot, where
// its cgroup can be seen, and also in this pid namespace, where its pids
// can.
func local(m *Marker, self ident.Self) (sameBoot, samePids bool) {
	h := m.proc()
	if otherMachine(h, self) {
		return false, false
	}
	if h.BootID != "" && self.BootID != "" && ident.NormalizeID(h.BootID) != ident.NormalizeID(self.BootID) {
		return false, false
	}
	return true, h.PidNamespace == "" || self.PidNamespace == "" || h.PidNamespace == self.PidNamespace
}

// names names the first few pids for people.
func names(pids []int) string { return ident.Names(pids, 3) }

func runs(n int) string {
	if n == 1 {
		return "runs"
	}
	return "run"
}

func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

func orNone(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func round(d time.Duration) time.Duration {
	if d < 0 {
		return 0
	}
	return d.Round(time.Second)
}
