//go:build linux

package marker

import (
	"strconv"
	"testing"
	"time"

	"github.com/padrun/padrun/marker/ident"
)

// A table per rung of the ladder (docs/spec.md §5, and §14 for
// namespaces): each row checks the verdict, the rung that decided, the
// facts it saw and their wording, whole.
func TestLadder_Rungs(t *testing.T) {
	now := time.Now()
	live := proc{ID: self.ID}
	with := func(f func(*proc)) proc { h := live; f(&h); return h }
	pid := func(h proc) string { return "pid " + strconv.Itoa(h.Pid) }
	same := ""
	if self.BootID != "" {
		same += ", same boot"
	}
	if self.MachineID != "" {
		same += ", same machine"
	}
	type row struct {
		name   string
		holder proc
		want   ident.Verdict
		fact   func(Facts) bool // nil: nothing more to check
		reason func(proc) string
	}
	gone, zombie, thread := reapedPid(t), zombiePid(t), threadID(t)
	rungs := map[Rung][]row{
		rungUnreadable: {
			{"NoPid", with(func(h *proc) { h.Pid = 0 }), ident.Unknown, nil,
				func(proc) string { return "unreadable: no pid recorded" }},
		},
		rungOtherMachine: {
			{"MachineID_NoHeartbeat", with(func(h *proc) { h.MachineID = "0123456789abcdef" }), ident.Unknown,
				func(f Facts) bool { return f.Machine == "0123456789abcdef" && f.Interval == 0 },
				func(h proc) string {
					return "another machine (machine id 01234567, host " + orNone(h.Hostname) + "), no heartbeat"
				}},
			{"MachineID_FreshHeartbeat", with(func(h *proc) {
				h.MachineID, h.Hostname, h.HeartbeatSeconds, h.Heartbeat = "other", "", 30, now.Add(-20*time.Second)
			}), ident.Unknown, func(f Facts) bool { return f.Interval == 30*time.Second && f.Age == 20*time.Second },
				func(proc) string {
					return "another machine (machine id other, host unknown), heartbeat fresh (20s ago, interval 30s)"
				}},
			{"MachineID_SilentHeartbeat", with(func(h *proc) {
				h.MachineID, h.Hostname, h.HeartbeatSeconds, h.Heartbeat = "other", "box", 30, now.Add(-91*time.Second)
			}), ident.Dead, nil,
				func(proc) string {
					return "another machine (machine id other, host box), heartbeat silent for 1m31s (interval 30s)"
				}},
			{"HostOnly", with(func(h *proc) { h.MachineID, h.BootID, h.Hostname = "", "", "elsewhere" }), ident.Unknown,
				func(f Facts) bool { return f.Machine == "" && f.Host == "elsewhere" },
				func(proc) string { return "another machine (host elsewhere), no heartbeat" }},
		},
		rungOtherBoot: {
			{"PreviousBoot", with(func(h *proc) { h.BootID = "0000-1111-2222" }), ident.Dead,
				func(f Facts) bool { return f.Boot == "000011112222" },
				func(h proc) string {
					return pid(h) + " ran in a previous boot (boot id 00001111, now " + short(ident.NormalizeID(self.BootID)) + ")"
				}},
		},
		rungOtherNamespace: {
			{"OtherPidNamespace", with(func(h *proc) { h.PidNamespace = "1" }), ident.Unknown,
				func(f Facts) bool { return f.Namespace == "another pid namespace (1)" },
				func(h proc) string {
					return "another pid namespace (1), " + pid(h) + " cannot be checked, no heartbeat"
				}},
			// §14: never dead by its pid, though no such pid runs here.
			{"OtherTimeNamespace_PidGone", with(func(h *proc) { h.TimeNamespace, h.Pid = "7", gone }), ident.Unknown, nil,
				func(h proc) string {
					return "another time namespace (7), " + pid(h) + " cannot be checked, no heartbeat"
				}},
			{"SilentHeartbeat", with(func(h *proc) {
				h.PidNamespace, h.HeartbeatSeconds, h.Heartbeat = "1", 1, now.Add(-time.Minute)
			}), ident.Dead, nil,
				func(h proc) string {
					return "another pid namespace (1), " + pid(h) + " cannot be checked, heartbeat silent for 1m0s (interval 1s)"
				}},
		},
		rungPid: {
			{"Gone", with(func(h *proc) { h.Pid = gone }), ident.Dead,
				func(f Facts) bool { return f.Found.Fact == ident.Gone },
				func(h proc) string { return pid(h) + " is gone" }},
			{"Gone_NoToken", with(func(h *proc) { h.Pid, h.StartToken = gone, "" }), ident.Dead, nil,
				func(h proc) string { return pid(h) + " is gone" }},
			// kill(2) would truncate 4294967297 to pid 1, alive: never probed.
			{"AbovePidMax", with(func(h *proc) { h.Pid, h.StartToken = 1<<32+1, "" }), ident.Dead,
				func(f Facts) bool { return f.Found.Fact == ident.Impossible },
				func(h proc) string {
					return pid(h) + " cannot name a process (negative, or above the kernel's pid_max): never probed"
				}},
			// kill(2) would take a negative pid for a process group.
			{"Negative", with(func(h *proc) { h.Pid = -int(self.Pid) }), ident.Dead,
				func(f Facts) bool { return f.Found.Fact == ident.Impossible },
				func(h proc) string {
					return pid(h) + " cannot name a process (negative, or above the kernel's pid_max): never probed"
				}},
		},
		rungStartToken: {
			{"Matches", live, ident.Alive,
				func(f Facts) bool { return f.Found.Fact == ident.Matches && f.SameBoot == (self.BootID != "") },
				func(h proc) string { return pid(h) + " start time matches" + same }},
			{"Reused", with(func(h *proc) { h.StartToken = "1" }), ident.Dead,
				func(f Facts) bool { return f.Found.Fact == ident.Reused && f.Token == "1" },
				func(h proc) string {
					return pid(h) + " was reused (start time " + string(self.StartToken) + ", recorded 1)"
				}},
			{"Zombie", with(func(h *proc) { h.Pid, h.StartToken = zombie, "1" }), ident.Dead, nil,
				func(h proc) string { return pid(h) + " is a zombie" }},
			{"Thread", with(func(h *proc) { h.Pid, h.StartToken = thread, "1" }), ident.Dead, nil,
				func(h proc) string { return pid(h) + " is a thread, not a process" }},
		},
		rungNoToken: {
			{"Unverified", with(func(h *proc) { h.StartToken = "" }), ident.Alive,
				func(f Facts) bool { return f.Found.Fact == ident.Unverified },
				func(h proc) string { return pid(h) + " exists (unverified: no start time recorded)" + same }},
			{"Zombie", with(func(h *proc) { h.Pid, h.StartToken = zombie, "" }), ident.Dead, nil,
				func(h proc) string { return pid(h) + " is a zombie" }},
		},
	}
	for rung := rungUnreadable; rung <= rungNoToken; rung++ {
		if len(rungs[rung]) == 0 {
			t.Fatalf("rung %d has no rows", rung)
		}
		for _, tt := range rungs[rung] {
			t.Run("Rung"+strconv.Itoa(int(rung))+"/"+tt.name, func(t *testing.T) {
				j := verdictOf(tt.holder, self, now)
				if j.Verdict != tt.want || j.Rung != rung || j.Case != Plain {
					t.Fatalf("verdictOf = %s (rung %d, case %d), want %s at rung %d", j, j.Rung, j.Case, tt.want, rung)
				}
				if tt.fact != nil && !tt.fact(j.Facts) {
					t.Fatalf("facts %+v", j.Facts)
				}
				if want := tt.reason(tt.holder); j.Reason != want || word(j) != want {
					t.Fatalf("worded %q, want %q", j.Reason, want)
				}
			})
		}
	}
}

// The cases beyond the rungs (the takeover's view of a padrun marker, and
// the refusals no marker decides), worded by the one function.
func TestWord_Cases(t *testing.T) {
	alive := verdictOf(proc{ID: ident.ID{Pid: self.Pid, StartToken: self.StartToken}}, self, time.Now())
	dead := Judgement{Verdict: ident.Dead, Rung: rungPid, Facts: Facts{Pid: 7, Found: ident.Finding{Verdict: ident.Dead, Fact: ident.Gone}}}
	with := func(j Judgement, f func(*Judgement)) Judgement { f(&j); return j }
	child := dead.worded()
	at := time.Date(2026, 1, 2, 10, 0, 0, 0, time.Local)
	writer := Judgement{Case: WriterBefore, Facts: Facts{Pid: 9}}.worded()
	for _, tc := range []struct {
		j    Judgement
		want string
	}{
		{with(alive, func(j *Judgement) { j.Case = Released }), "its padrun released the lock but " + alive.Reason + " (still exiting?)"},
		{with(dead, func(j *Judgement) {
			j.Verdict, j.Facts.Found.Fact, j.Rung, j.Case = ident.Unknown, ident.Unchecked, rungPid, Released
		}),
			"its padrun released the lock but pid 7 cannot be checked"},
		{with(alive, func(j *Judgement) { j.Case, j.Facts.Padrun = OrphanChild, 41 }), "orphan: padrun pid 41 is gone but its child " + alive.Reason},
		{with(dead, func(j *Judgement) { j.Case, j.Facts.Of = StaleChild, &child }), "pid 7 is gone; child pid 7 is gone"},
		{Judgement{Case: Unreadable, Rung: rungUnreadable, Facts: Facts{Err: "not JSON"}}, "unreadable: not JSON"},
		{Judgement{Case: CgroupUnread, Facts: Facts{Padrun: 41, Err: "EACCES"}}, "orphan: padrun pid 41 and its child are gone but its cgroup cannot be read: EACCES"},
		{Judgement{Case: CgroupProcs, Facts: Facts{Padrun: 41, Procs: "pid 9 (sleep)", Count: 1, Cgroup: "/sys/fs/cgroup/padrun-1"}},
			"orphan: padrun pid 41 and its child are gone but pid 9 (sleep) of its session still runs (cgroup /sys/fs/cgroup/padrun-1)"},
		{Judgement{Case: GroupUnlisted, Facts: Facts{Padrun: 41, Err: "EMFILE"}}, "orphan: padrun pid 41 and its child are gone but its processes cannot be listed: EMFILE"},
		{Judgement{Case: GroupProcs, Facts: Facts{Padrun: 41, Procs: "pid 9, pid 10", Count: 2, Pgid: 9}},
			"orphan: padrun pid 41 and its child are gone but pid 9, pid 10 of its session still run (its child's process group 9)"},
		{Judgement{Case: GroupProcs, Facts: Facts{Padrun: 41, Procs: "pid 9", Count: 1, Sid: 8}},
			"orphan: padrun pid 41 and its child are gone but pid 9 of its session still runs (its child's session 8)"},
		{Judgement{Case: LockBusy, Facts: Facts{Name: "s.jsonl.live.lock"}}, "its lock s.jsonl.live.lock is held by a live process"},
		{Judgement{Case: LockBusy, Facts: Facts{Name: "s.jsonl.live.lock", Of: &alive}}, alive.Reason + ", and its lock s.jsonl.live.lock is held by a live process"},
		{Judgement{Case: LockOrphan, Facts: Facts{Name: "s.jsonl.live.lock", Padrun: 41, Procs: "pid 9 (codex)", Count: 1}},
			"orphan: padrun pid 41 is gone but pid 9 (codex) of its session still runs and holds its lock s.jsonl.live.lock"},
		{Judgement{Case: InodeHeld, Facts: Facts{Padrun: 41, LockPid: 41, At: "/w/s.jsonl"}}, "the session file itself is locked by padrun pid 41, which holds it as /w/s.jsonl"},
		{Judgement{Case: InodeHeld, Facts: Facts{Padrun: 41, LockPid: 9, At: "/w/t.jsonl", Named: hardLink}},
			"the session file itself is locked by padrun pid 41, which holds it as /w/t.jsonl (another name of it: a hard link); pid 9 of its session holds the lock"},
		{Judgement{Case: InodeHeld, Facts: Facts{Padrun: 41, LockPid: 41, At: "/w/u.jsonl", Named: moved}},
			"the session file itself is locked by padrun pid 41, which holds it as /w/u.jsonl (renamed or moved while held)"},
		{Judgement{Case: InodeHeld, Facts: Facts{LockPid: 9, Command: "vim"}}, "the session file itself is locked by pid 9 (vim)"},
		{Judgement{Case: InodeHeld}, "the session file itself is locked by another process"},
		{Judgement{Case: OthersLock, Facts: Facts{Name: "s.jsonl.live.lock", User: "user bob (uid 1001)"}},
			"its lock s.jsonl.live.lock belongs to user bob (uid 1001), which this user cannot open or judge"},
		{Judgement{Case: OthersLockHeld, Facts: Facts{Name: "s.jsonl.live.lock", UserName: "bob", LockPid: 9}}, "user bob's pid 9 holds its lock s.jsonl.live.lock"},
		{Judgement{Case: OthersMarker, Facts: Facts{Name: "s.jsonl.live.json", User: "user bob (uid 1001)"}},
			"its marker s.jsonl.live.json belongs to user bob (uid 1001), which this user cannot read"},
		{Judgement{Case: BreakBusy, Facts: Facts{Name: "s.jsonl.live.break"}},
			"no flock reaches the other holders here, and another process is taking the file over (s.jsonl.live.break)"},
		{Judgement{Case: BreakBusy, Facts: Facts{Name: "s.jsonl.live.break", Of: &alive}},
			"no flock reaches the other holders here, and another process is taking the file over (s.jsonl.live.break): " + alive.Reason},
		{Judgement{Case: MarkerAppeared}, "a marker appeared meanwhile"},
		{Judgement{Case: WriterUnverified, Facts: Facts{Pid: 9}}, "pid 9 exists (unverified: its start time cannot be read)"},
		{Judgement{Case: WriterReused, Facts: Facts{Pid: 9, Started: at.Add(2 * time.Second), Written: at}},
			"pid 9 was reused: it started at 10:00:02.000, after its lock was written at 10:00:00.000"},
		{Judgement{Case: WriterBefore, Facts: Facts{Pid: 9}}, "pid 9 started before its lock was written"},
		{Judgement{Case: InUseLock, Facts: Facts{Procs: "pid 9 (copilot)", Name: "inuse.9.lock", Command: "copilot", Of: &writer}},
			"pid 9 (copilot) has the session open (its own in-use lock inuse.9.lock, which copilot only warns of): pid 9 started before its lock was written"},
		{Judgement{Case: EtcdHeld, Facts: Facts{Key: "padrun/s/k", Lease: "1a2b", Machine: "0123456789abcdef"}}, "held in etcd under padrun/s/k (lease 1a2b, machine 01234567)"},
		{Judgement{Case: EtcdHeld, Facts: Facts{Key: "padrun/s/k", Lease: "1a2b"}}, "held in etcd under padrun/s/k (lease 1a2b, machine unknown)"},
		{Judgement{Case: EtcdLeaseless, Facts: Facts{Key: "padrun/s/k"}},
			"held in etcd under padrun/s/k by a key with no lease, which no live padrun leaves (padrun unlock --etcd removes it)"},
		{Judgement{Case: EtcdForeign, Facts: Facts{Key: "padrun/s/k", Lease: "1a2b"}}, "held in etcd under padrun/s/k by a value that is not padrun's (lease 1a2b)"},
	} {
		if got := word(tc.j); got != tc.want {
			t.Errorf("word = %q\n want %q", got, tc.want)
		}
	}
}

// An in-use lock's writer and an etcd key's holder are judged by the
// ladder: a live writer that started before its lock holds the file, one
// that started after it is a reused pid (dead), a gone one is dead; only
// a padrun's key with a lease is alive, a leaseless or foreign one unknown.
func TestLadder_InUseAndEtcd(t *testing.T) {
	now := time.Now()
	started, ok := now.Add(-time.Minute), true
	for _, tc := range []struct {
		name    string
		j       Judgement
		verdict ident.Verdict
		c       Case
	}{
		{"writer before its lock", InUseWriter(self.Pid, now, started, ok), ident.Alive, WriterBefore},
		{"start unreadable", InUseWriter(self.Pid, now, time.Time{}, false), ident.Alive, WriterUnverified},
		{"reused pid", InUseWriter(self.Pid, started.Add(-time.Hour), started, ok), ident.Dead, WriterReused},
		{"within the slack", InUseWriter(self.Pid, started.Add(-inUseSlack/2), started, ok), ident.Alive, WriterBefore},
		{"gone pid", InUseWriter(1<<22+1, now, started, ok), ident.Dead, Plain},
		{"the lock, alive", InUse("inuse.1.lock", "copilot", InUseWriter(self.Pid, now, started, ok)), ident.Alive, InUseLock},
		{"the lock, unverified", InUse("inuse.1.lock", "copilot", InUseWriter(self.Pid, now, time.Time{}, false)), ident.Alive, InUseLock},
		{"etcd, a padrun's", Etcd("k", "1", false, &Marker{}), ident.Alive, EtcdHeld},
		{"etcd, leaseless", Etcd("k", "0", true, &Marker{}), ident.Unknown, EtcdLeaseless},
		{"etcd, foreign", Etcd("k", "1", false, nil), ident.Unknown, EtcdForeign},
	} {
		if tc.j.Verdict != tc.verdict || tc.j.Case != tc.c || tc.j.Reason != word(tc.j) {
			t.Errorf("%s: %v, case %d, reason %q; want %v, case %d, worded", tc.name, tc.j.Verdict, tc.j.Case, tc.j.Reason, tc.verdict, tc.c)
		}
	}
}
