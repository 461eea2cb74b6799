// Package ident reads the identity tokens that tell one process, boot and
// machine from another, and judges whether a recorded process is still alive.
//
// Both the marker and the registry judge holders with it, so the rules of
// the verdict ladder that concern a single process (rungs 5 to 7 of the
// contract) live here once.
package ident

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
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

// Self holds the tokens of this process and machine. A token that could not
// be read is empty (or -1 for UID on systems without one).
type Self struct {
	Pid          int
	StartToken   string
	BootID       string
	MachineID    string
	Hostname     string
	PidNamespace string
	UID          int
}

// ReadSelf reads every token of this process once.
func ReadSelf() Self {
	s := Self{Pid: os.Getpid(), UID: os.Getuid()}
	s.StartToken, _ = StartToken(s.Pid) // Best effort: a missing token is left out.
	s.BootID = bootID()
	s.MachineID = machineID()
	s.Hostname, _ = os.Hostname() // Best effort: recorded for people only.
	s.PidNamespace = pidNamespace()
	return s
}

// Probe judges whether pid is still the process that was recorded with the
// start token (empty when none was recorded) on this machine, in this pid
// namespace. The reason says why, for people.
func Probe(pid int, token string) (Verdict, string) {
	if pid <= 0 {
		return Unknown, "no pid recorded"
	}
	p := strconv.Itoa(pid)
	switch exists(pid) {
	case Dead:
		return Dead, "pid " + p + " is gone"
	case Unknown:
		return Unknown, "pid " + p + " cannot be checked"
	}
	st, err := readProc(pid)
	if err != nil {
		if token == "" {
			return Alive, "pid " + p + " exists (unverified: no start time recorded)"
		}
		return Unknown, "pid " + p + " exists but its start time cannot be read"
	}
	switch {
	case !st.process:
		return Dead, "pid " + p + " is a thread, not a process"
	case st.zombie:
		return Dead, "pid " + p + " is a zombie"
	case token == "":
		return Alive, "pid " + p + " exists (unverified: no start time recorded)"
	case st.start == "":
		return Unknown, "pid " + p + " exists but its start time cannot be read"
	case st.start != token:
		return Dead, "pid " + p + " was reused (start time " + st.start + ", recorded " + token + ")"
	}
	return Alive, "pid " + p + " start time matches"
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
