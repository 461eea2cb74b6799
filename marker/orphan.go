package marker

import (
	"os"
	"path/filepath"
	"strconv"

	"github.com/padrun/padrun/marker/ident"
	"github.com/padrun/padrun/supervise/cgroup"
)

// leftover checks, for a padrun marker whose padrun and child are gone,
// that no other process of that session still runs: none in its cgroup, or
// (without one) in the process group or session its child led. ok is false
// with a judgement naming the process when one runs, or saying why it cannot
// be told. An empty cgroup left behind is removed.
func leftover(m *Marker, self ident.Self) (j Judgement, ok bool) {
	sameBoot, samePids := local(m, self)
	if !sameBoot {
		return Judgement{}, true // another boot or machine: its processes are not ours to see
	}
	gone := "orphan: padrun pid " + strconv.Itoa(m.Pid) + " and its child are gone but "
	// A cgroup is seen from every pid namespace of the machine; pids are not.
	if m.Cgroup != "" && filepath.IsAbs(m.Cgroup) {
		if _, err := os.Stat(m.Cgroup); err == nil {
			pids, err := cgroup.Procs(m.Cgroup)
			if err != nil {
				return Judgement{ident.Unknown, gone + "its cgroup cannot be read: " + err.Error()}, false
			}
			if len(pids) > 0 {
				return Judgement{ident.Alive, gone + names(pids) + " of its session still " + runs(pids) + " (cgroup " + m.Cgroup + ")"}, false
			}
			cgroup.RemoveLeftover(m.Cgroup)
			return Judgement{}, true // the cgroup holds every process of the session
		}
	}
	if !samePids {
		return Judgement{}, true
	}
	// A process that started before the session cannot be of it, but a
	// start token read in another time namespace is shifted: no floor then.
	since := string(m.StartToken)
	if ident.OtherNamespace("", string(m.TimeNamespace), "", self.TimeNamespace) != "" {
		since = ""
	}
	pids, err := ident.GroupProcs(m.ChildPgid, m.ChildSid, since)
	if err != nil {
		return Judgement{ident.Unknown, gone + "its processes cannot be listed: " + err.Error()}, false
	}
	if len(pids) > 0 {
		where := "process group " + strconv.Itoa(m.ChildPgid)
		if m.ChildPgid <= 0 {
			where = "session " + strconv.Itoa(m.ChildSid)
		}
		return Judgement{ident.Alive, gone + names(pids) + " of its session still " + runs(pids) + " (its child's " + where + ")"}, false
	}
	return Judgement{}, true
}

// local tells whether m was written on this machine in this boot, where
// its cgroup can be seen, and also in this pid namespace, where its pids
// can.
func local(m *Marker, self ident.Self) (sameBoot, samePids bool) {
	h := m.Proc()
	if other, _ := otherMachine(h, self); other {
		return false, false
	}
	if h.BootID != "" && self.BootID != "" && ident.NormalizeID(h.BootID) != ident.NormalizeID(self.BootID) {
		return false, false
	}
	return true, h.PidNamespace == "" || self.PidNamespace == "" || h.PidNamespace == self.PidNamespace
}

// names names the first few pids for people.
func names(pids []int) string { return ident.Names(pids, 3) }

func runs(pids []int) string {
	if len(pids) == 1 {
		return "runs"
	}
	return "run"
}
