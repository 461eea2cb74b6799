// Package ident reads the identity tokens that tell one process, boot and
// machine from another, and judges whether a recorded process is still alive.
//
// Both the marker and the registry judge holders with it, so the rules of
// the verdict ladder that concern a single process (rungs 5 to 7 of
// docs/spec.md §5: kill(pid, 0), the start token, no token) live here once.
package ident

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Verdict is the answer to "is this holder still alive?".
type Verdict int

const (
	// Unknown means the holder cannot be judged; callers must refuse.
	Unknown Verdict = iota
	// Dead means the holder is proven gone.
	Dead
	// Alive means the holder is proven, or presumed with no way to disprove, alive.
	Alive
)

func (v Verdict) String() string {
	switch v {
	case Dead:
		return "dead"
	case Alive:
		return "alive"
	}
	return "unknown"
}

// ID is what tells one process from another across pid reuse, boots,
// machines and namespaces: the identity that markers, break files and the
// verdict ladder record and compare. A token that could not be read is
// empty. Its JSON is the marker's (docs/spec.md §5).
type ID struct {
	Pid        int    `json:"pid"`
	StartToken Token  `json:"startToken,omitempty"`
	BootID     string `json:"bootId,omitempty"`
	MachineID  string `json:"machineId,omitempty"`
	Hostname   string `json:"hostname,omitempty"`
	// PidNamespace and TimeNamespace are the namespaces the pid and the
	// start token were read in: the kernel shifts start tokens by a time
	// namespace's boottime offset.
	PidNamespace  Token `json:"pidNamespace,omitempty"`
	TimeNamespace Token `json:"timeNamespace,omitempty"`
}

// Self is the identity of this process, and its user (-1 on systems
// without one).
type Self struct {
	ID
	UID int
}

// ReadSelf reads every token of this process, once for the process:
// none of them changes while it lives (its pid and start, the boot, the
// machine, its pid and time namespaces; the hostname is for people), and
// the run, its temp names, its cgroup and its refusal each need them.
var ReadSelf = sync.OnceValue(readSelf)

func readSelf() Self {
	s := Self{ID: ID{Pid: os.Getpid()}, UID: os.Getuid()}
	token, _ := StartToken(s.Pid) // Best effort: a missing token is left out.
	s.StartToken = Token(token)
	s.BootID = bootID()
	s.MachineID = machineID()
	s.Hostname, _ = os.Hostname() // Best effort: recorded for people only.
	s.PidNamespace = Token(pidNamespace())
	s.TimeNamespace = Token(timeNamespace())
	return s
}

// Namespaces returns this process's pid and time namespaces, as ReadSelf
// reads them ("" where there is none to read).
func Namespaces() (pid, time string) { return pidNamespace(), timeNamespace() }

// OtherNamespace says why a process recorded in the pid and time
// namespaces pidNS and timeNS cannot be checked from the namespaces self
// reads in, or "" when it can: its pid means another process here, and its
// start token was read shifted by another boottime offset. A namespace
// left out on either side is taken as the same.
func OtherNamespace(pidNS, timeNS, selfPidNS, selfTimeNS string) string {
	switch {
	case pidNS != "" && selfPidNS != "" && pidNS != selfPidNS:
		return "another pid namespace (" + pidNS + ")"
	case timeNS != "" && selfTimeNS != "" && timeNS != selfTimeNS:
		return "another time namespace (" + timeNS + ")"
	}
	return ""
}

// Fact is what Probe saw of a pid: what decided its verdict.
type Fact int

const (
	NoPid           Fact = iota // no pid recorded: unknown
	Gone                        // kill(pid, 0): no such process: dead
	Unchecked                   // kill(pid, 0) failed otherwise: unknown
	StartUnreadable             // it exists but its start token cannot be read: unknown
	Unverified                  // it exists and no token was recorded: alive
	Thread                      // a thread id, not a process: dead
	Zombie                      // dead
	Reused                      // its start token differs from the one recorded: dead
	Matches                     // its start token is the one recorded: alive
	Impossible                  // negative, or above the kernel's pid_max: no process has it: dead, never probed
)

// ValidPid reports whether pid can name a process: positive and at most
// the kernel's pid_max. kill(2) takes a pid_t, so 4294967297 would probe pid
// 1, and a negative one a process group: such a pid is judged dead,
// never probed, by the ladder and the registry alike (docs/spec.md §5, rung 5).
func ValidPid(pid int) bool { return pid > 0 && pid <= pidMax() }

// Finding is Probe's answer: the verdict, the fact behind it, and the start
// token read (for Reused).
type Finding struct {
	Verdict Verdict
	Fact    Fact
	Start   string
}

// Probe judges whether pid is still the process that was recorded with the
// start token (empty when none was recorded) on this machine, in this pid
// namespace: rungs 5 to 7 of the ladder. err is this process's own failure
// that left the verdict unknown (out of descriptors or memory, see
// exhausted): such a verdict says nothing of the holder, and a caller that
// decides reports the error.
func Probe(pid int, token string) (Finding, error) {
	switch {
	case pid == 0:
		return Finding{Unknown, NoPid, ""}, nil
	case !ValidPid(pid):
		return Finding{Dead, Impossible, ""}, nil
	}
	switch exists(pid) {
	case Dead:
		return Finding{Dead, Gone, ""}, nil
	case Unknown:
		return Finding{Unknown, Unchecked, ""}, nil
	}
	st, err := readProc(pid)
	switch {
	case err != nil && exhausted(err):
		return Finding{Unknown, StartUnreadable, ""}, fmt.Errorf("ident: read the state of pid %d: %w", pid, err)
	case err != nil && token == "":
		return Finding{Alive, Unverified, ""}, nil
	case err != nil:
		return Finding{Unknown, StartUnreadable, ""}, nil
	}
	switch {
	case !st.process:
		return Finding{Dead, Thread, ""}, nil
	case st.zombie:
		return Finding{Dead, Zombie, ""}, nil
	case token == "":
		return Finding{Alive, Unverified, ""}, nil
	case st.start == "":
		return Finding{Unknown, StartUnreadable, ""}, nil
	case st.start != token:
		return Finding{Dead, Reused, st.start}, nil
	}
	return Finding{Alive, Matches, st.start}, nil
}

// exhausted reports whether err is this process running out of a resource
// (descriptors, memory, buffers): padrun's own failure, never a fact about a
// holder.
func exhausted(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) ||
		errors.Is(err, syscall.ENOMEM) || errors.Is(err, syscall.ENOBUFS)
}

// StartToken returns the start token of pid: on Linux, field 22 of its stat file.
func StartToken(pid int) (string, error) {
	st, err := readStart(pid)
	if err != nil {
		return "", err
	}
	return st.start, nil
}

// procState is what the kernel says of a pid.
type procState struct {
	start   string
	zombie  bool
	process bool // false for a thread id that is not a thread-group leader
}

// Token is a token as recorded in JSON: a string that also accepts a number,
// as tokens written by other tools may be either.
type Token string

func (t *Token) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] != '"' {
		var n json.Number
		if err := json.Unmarshal(b, &n); err != nil {
			return err
		}
		*t = Token(n.String())
		return nil
	}
	return json.Unmarshal(b, (*string)(t))
}

// NormalizeID is a boot or machine id in the one form they are compared in:
// whitespace trimmed, lower case, dashes removed. Other tools write the
// kernel's boot_id with its trailing newline, or as a bare hex string.
func NormalizeID(id string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(id)), "-", "")
}

// Names names the first most pids for people, then says how many more.
func Names(pids []int, most int) string {
	var s []string
	for i, pid := range pids {
		if i == most {
			s = append(s, "and "+strconv.Itoa(len(pids)-most)+" more")
			break
		}
		s = append(s, Name(pid))
	}
	return strings.Join(s, ", ")
}

// Name names pid for people: "pid 123 (codex)".
func Name(pid int) string {
	s := "pid " + strconv.Itoa(pid)
	if c := Command(pid); c != "" {
		s += " (" + c + ")"
	}
	return s
}
