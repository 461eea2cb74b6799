package marker

// The verdict ladder (docs/spec.md §5) and the takeover judgement built on it.

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/padrun/padrun/marker/ident"
)

// takeover judges the marker at file while holding its lock. It returns
// the marker to replace (nil when there is none), or a *HeldError. blind
// says the flock cannot see every holder (none, or only this machine's).
func takeover(file string, self ident.Self, now time.Time, blind bool) (stale *Marker, err error) {
	m, err := Read(file)
	var ue *UnreadableError
	switch {
	case err == errMarkerAbsent:
		return nil, nil
	case errors.As(err, &ue):
		return nil, &HeldError{File: file, Kind: HeldUnreadable, Judgement: Judgement{ident.Unknown, "unreadable: " + ue.Why}}
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
		j, err := judge(m.Proc(), self, now)
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
	j, err := judge(m.Proc(), self, now)
	if err != nil {
		return nil, fmt.Errorf("marker: judge the holder of %s: %w", file, err)
	}
	if j.Verdict != ident.Dead {
		if !blind {
			j.Reason = "its padrun released the lock but " + j.Reason
		}
		if j.Verdict == ident.Alive && !blind {
			j.Reason += " (still exiting?)"
		}
		return nil, refuse(j)
	}
	if child, ok := m.Child(); ok {
		j, err := judge(child, self, now)
		if err != nil {
			return nil, fmt.Errorf("marker: judge the child in %s: %w", Path(file), err)
		}
		if j.Verdict != ident.Dead {
			j.Reason = "orphan: padrun pid " + strconv.Itoa(m.Pid) + " is gone but its child " + j.Reason
			return nil, refuse(j)
		}
	}
	if j, ok := leftover(m, self); !ok {
		return nil, refuse(j)
	}
	return m, nil
}

// Judgement is a verdict with the ladder's reasoning, for people.
type Judgement struct {
	Verdict ident.Verdict
	Reason  string
}

func (j Judgement) String() string { return j.Verdict.String() + ": " + j.Reason }

// verdictOf runs the verdict ladder of docs/spec.md §5 on h. Boot and machine ids
// are compared normalised (ident.NormalizeID).
func verdictOf(h Proc, self ident.Self, now time.Time) Judgement {
	j, _ := judge(h, self, now)
	return j
}

// judge is verdictOf, and the error of padrun's own (out of descriptors or
// memory) that left the verdict unknown, which callers that decide report
// as itself.
func judge(h Proc, self ident.Self, now time.Time) (Judgement, error) {
	if h.Pid <= 0 {
		return Judgement{ident.Unknown, "unreadable: no pid recorded"}, nil
	}
	h.BootID, h.MachineID = ident.NormalizeID(h.BootID), ident.NormalizeID(h.MachineID)
	self.BootID, self.MachineID = ident.NormalizeID(self.BootID), ident.NormalizeID(self.MachineID)
	if other, why := otherMachine(h, self); other {
		return remote(h, now, why), nil
	}
	if h.BootID != "" && self.BootID != "" && h.BootID != self.BootID {
		return Judgement{ident.Dead, "pid " + strconv.Itoa(h.Pid) + " ran in a previous boot (boot id " + short(h.BootID) + ", now " + short(self.BootID) + ")"}, nil
	}
	// Rung 4: a pid of another pid namespace names another process here,
	// and a start token read in another time namespace is shifted by its
	// boottime offset: neither proves anything, alive or dead.
	if ns := ident.OtherNamespace(h.PidNamespace, h.TimeNamespace, self.PidNamespace, self.TimeNamespace); ns != "" {
		return remote(h, now, ns+", pid "+strconv.Itoa(h.Pid)+" cannot be checked"), nil
	}
	v, why, err := ident.Probe(h.Pid, h.StartToken)
	if v != ident.Dead {
		why += sameBoot(h, self)
	}
	return Judgement{v, why}, err
}

// otherMachine tells whether h ran on another machine than self.
func otherMachine(h Proc, self ident.Self) (bool, string) {
	switch {
	case h.MachineID != "" && self.MachineID != "":
		if h.MachineID != self.MachineID {
			return true, "another machine (machine id " + short(h.MachineID) + ", host " + orNone(h.Hostname) + ")"
		}
	case h.BootID != "" && h.BootID == self.BootID:
	case h.Hostname != "" && self.Hostname != "" && h.Hostname != self.Hostname:
		return true, "another machine (host " + h.Hostname + ")"
	}
	return false, ""
}

// remote judges a holder whose pid cannot be checked from here: only its
// heartbeat, the marker's mtime, can prove it dead.
func remote(h Proc, now time.Time, why string) Judgement {
	if h.HeartbeatSeconds <= 0 || h.Heartbeat.IsZero() {
		return Judgement{ident.Unknown, why + ", no heartbeat"}
	}
	interval := time.Duration(h.HeartbeatSeconds) * time.Second
	age := now.Sub(h.Heartbeat)
	if age > 3*interval {
		return Judgement{ident.Dead, fmt.Sprintf("%s, heartbeat silent for %s (interval %s)", why, round(age), interval)}
	}
	return Judgement{ident.Unknown, fmt.Sprintf("%s, heartbeat fresh (%s ago, interval %s)", why, round(age), interval)}
}

func sameBoot(h Proc, self ident.Self) string {
	var s []string
	if h.BootID != "" && h.BootID == self.BootID {
		s = append(s, "same boot")
	}
	if h.MachineID != "" && h.MachineID == self.MachineID {
		s = append(s, "same machine")
	}
	if len(s) == 0 {
		return ""
	}
	return ", " + strings.Join(s, ", ")
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
