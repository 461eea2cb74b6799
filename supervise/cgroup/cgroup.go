// Package cgroup is the session's cgroup v2, on Linux: its name, its
// making, the checks of what lives in it, its removal, and the pruning of
// those that padruns killed by SIGKILL left. The run makes one (Session),
// the marker's orphan check reads and removes a dead padrun's (through
// marker/cgroupdir, the leaf that reads and removes the folders), and prune
// removes those no marker names any more. Elsewhere there are none.
package cgroup

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/padrun/padrun/marker/cgroupdir"
	"github.com/padrun/padrun/marker/ident"
)

// Prefix starts the name of every session cgroup: padrun touches no other.
const Prefix = cgroupdir.Prefix

// Tag names the session's cgroup after padrun: its pid and start token,
// its pid namespace, where the pid means this process, and its time
// namespace, where the start token was read (shifted by its boottime
// offset).
func Tag(self ident.Self) string {
	tag := strconv.Itoa(self.Pid) + "-" + string(self.StartToken)
	if self.PidNamespace != "" {
		tag += "-" + string(self.PidNamespace)
		if self.TimeNamespace != "" {
			tag += "-" + string(self.TimeNamespace)
		}
	}
	return tag
}

// minAge is how old the cgroup of a dead padrun must be when its name does
// not say its pid or time namespace (earlier releases named none): a
// padrun of another namespace, whose pid means another process here or
// whose start token is read shifted, makes its cgroup a moment before its
// child starts in it.
const minAge = time.Minute

// deadTag reports whether the padrun that made the cgroup of tag is proven
// gone: its pid and start token are of no process in its pid namespace,
// which is this one, read in its time namespace, which is this one too.
func deadTag(tag string, made time.Time, self ident.Self, now time.Time) bool {
	f := strings.Split(tag, "-")
	if len(f) < 2 || len(f) > 4 {
		return false
	}
	pid, err := strconv.Atoi(f[0])
	if err != nil || pid <= 0 || strconv.Itoa(pid) != f[0] || f[1] == "" {
		return false
	}
	switch {
	case len(f) >= 3 && f[2] != string(self.PidNamespace), len(f) == 4 && f[3] != string(self.TimeNamespace):
		return false // another namespace's: its prune judges it
	case len(f) < 4 && now.Sub(made) < minAge:
		return false
	}
	p, _ := ident.Probe(pid, f[1])
	return p.Verdict == ident.Dead
}

// Pruned is what Prune did.
type Pruned struct {
	Removed int    `json:"cgroups_removed"`
	Kept    []Kept `json:"cgroups_kept"`
}

// Kept is the cgroup of a dead padrun that Prune kept: processes of its
// session still live in it, or it could not be removed.
type Kept struct {
	Path  string `json:"path"`
	Procs []int  `json:"pids,omitempty"`
	Err   string `json:"error,omitempty"`
}

// String says why the cgroup was kept.
func (k Kept) String() string {
	if k.Err != "" {
		return k.Path + " of a dead padrun: " + k.Err
	}
	return fmt.Sprintf("%s of a dead padrun: %s still running in it", k.Path, ident.Names(k.Procs, 5))
}

// Prune removes the session cgroups that padruns killed by SIGKILL left
// below padrun's own cgroup, which only a later run on the same file would
// remove otherwise: those whose padrun is proven dead and that are empty.
// The kernel refuses to remove a cgroup that any process lives in; those
// are kept, with their processes.
//
// A cgroup that cannot be removed is kept with the error, and the others
// are still looked at; only a folder that cannot be listed is an error.
func Prune(now time.Time) (Pruned, error) {
	res := Pruned{Kept: []Kept{}}
	left, err := ListLeft()
	if err != nil {
		return res, fmt.Errorf("list the sessions' cgroups: %w", err)
	}
	self := ident.ReadSelf()
	for _, l := range left {
		if !deadTag(l.Tag, l.Made, self, now) {
			continue
		}
		gone, procs, err := RemoveLeft(l.Path)
		switch {
		case err != nil:
			res.Kept = append(res.Kept, Kept{Path: l.Path, Err: err.Error()})
		case gone:
			res.Removed++
		case len(procs) > 0:
			res.Kept = append(res.Kept, Kept{Path: l.Path, Procs: procs})
		}
		// Else busy with no process: its last one is exiting, or a cgroup
		// was made inside it. The next prune sees.
	}
	return res, nil
}

// MaxStretch bounds how far a session's waits for the machine stretch a
// Clock: a session that always has a process waiting still comes to the
// end of its clock, at MaxStretch times its length.
const MaxStretch = 4

// Clock is a wait counted on a session's own time: the time its processes
// waited for a CPU or for I/O (stalled: the cgroup's pressure, Stalled) is
// not counted, up to MaxStretch times the wait. On a loaded machine what
// the session does takes longer by that much, and its clocks with it.
type Clock struct {
	wait      time.Duration
	stalled   func() time.Duration // nil: wall-clock time
	from      time.Time
	stallFrom time.Duration // stalled() at from
}

// StartClock starts a clock of wait, now; stalled nil counts wall-clock
// time alone.
func StartClock(wait time.Duration, stalled func() time.Duration) Clock {
	c := Clock{wait: wait, stalled: stalled}
	c.Restart()
	return c
}

// Restart counts the clock from now.
func (c *Clock) Restart() { c.from, c.stallFrom = time.Now(), c.stall() }

// Left is how much of the clock is left, 0 once it ran out.
func (c *Clock) Left() time.Duration {
	wall := time.Since(c.from)
	if wall >= MaxStretch*c.wait {
		return 0
	}
	if ran := wall - (c.stall() - c.stallFrom); ran < c.wait {
		return c.wait - ran
	}
	return 0
}

func (c *Clock) stall() time.Duration {
	if c.stalled == nil {
		return 0
	}
	return c.stalled()
}
