package marker

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/padrun/padrun/marker/ident"
)

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
	gone := "orphan: padrun pid " + strconv.Itoa(m.Pid) + " and its child are gone but "
	// A cgroup is seen from every pid namespace of the machine; pids are not.
	if m.Cgroup != "" && filepath.IsAbs(m.Cgroup) {
		if _, err := os.Stat(m.Cgroup); err == nil {
			pids, err := ident.CgroupProcs(m.Cgroup)
			if err != nil {
				return Judgement{ident.Unknown, gone + "its cgroup cannot be read: " + err.Error()}, false
			}
			if len(pids) > 0 {
				return Judgement{ident.Alive, gone + names(pids) + " of its session still " + runs(pids) + " (cgroup " + m.Cgroup + ")"}, false
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
func names(pids []int) string {
	const most = 3
	var s []string
	for i, pid := range pids {
		if i == most {
			s = append(s, "and "+strconv.Itoa(len(pids)-most)+" more")
			break
		}
		s = append(s, ident.Name(pid))
	}
	return strings.Join(s, ", ")
}

func runs(pids []int) string {
	if len(pids) == 1 {
		return "runs"
	}
	return "run"
}

// reclaim removes the cgroup that stale, a padrun marker that a taker or
// unlock just replaced or removed, left on this machine: takeover found no
// process in it. Only they do this: a look (Inspect) changes nothing.
func reclaim(stale *Marker, self ident.Self) {
	if stale == nil || stale.Tool != Tool || stale.Cgroup == "" || !filepath.IsAbs(stale.Cgroup) {
		return
	}
	if sameBoot, _ := local(stale, self); sameBoot {
		removeCgroup(stale.Cgroup)
	}
}

// removeCgroup removes an empty cgroup a killed padrun left behind. It
// touches only folders named as padrun names them, on a cgroup v2
// filesystem.
func removeCgroup(dir string) {
	if !strings.HasPrefix(filepath.Base(dir), "padrun-") || !ident.IsCgroup2(dir) {
		return
	}
	// Its last process may be a zombie that init has yet to reap: the
	// kernel still counts it, though it lists no process.
	for try := 0; try < 50; try++ {
		if err := syscall.Rmdir(dir); err != syscall.EBUSY {
			return // Best effort: removed, or a nested one keeps it.
		}
		if pids, err := ident.CgroupProcs(dir); err != nil || len(pids) > 0 {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}
