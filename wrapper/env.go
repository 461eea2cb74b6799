package wrapper

import (
	"os"
	"strconv"
	"strings"

	"github.com/padrun/padrun/wrapper/control"
)

// Env is padrun's environment, read once at the edge (ReadEnv, from main)
// and passed down: each of padrun's own variables is parsed here alone.
type Env struct {
	// Environ is the whole environment, as the child inherits it.
	Environ []string

	sessionPID    string // PAD_SESSION_PID as given: SessionPID parses it
	hasSessionPID bool
	Control       string // PADRUN_CONTROL: the socket a companion's hook asks
	Agent         string // PAD_AGENT: the agent name when neither --agent nor .pad.toml gives one
	RuntimeDir    string // XDG_RUNTIME_DIR: where the control folder is made
	StateHome     string // XDG_STATE_HOME: where padrun remembers its warnings
	Path          string // PATH: where the command is found
}

// ReadEnv reads padrun's environment.
func ReadEnv() Env { return EnvFrom(os.Environ()) }

// EnvFrom reads an environment given as KEY=VALUE strings; of a repeated
// key the first counts, as os.Getenv finds it.
func EnvFrom(environ []string) Env {
	e := Env{Environ: environ}
	e.sessionPID, e.hasSessionPID = e.lookup("PAD_SESSION_PID")
	e.Control = e.Getenv("PADRUN_CONTROL")
	e.Agent = e.Getenv("PAD_AGENT")
	e.RuntimeDir = e.Getenv("XDG_RUNTIME_DIR")
	e.StateHome = e.Getenv("XDG_STATE_HOME")
	e.Path = e.Getenv("PATH")
	return e
}

// Getenv returns the value of key, or "": the harness adapters read their
// own variables through it.
func (e Env) Getenv(key string) string {
	v, _ := e.lookup(key)
	return v
}

func (e Env) lookup(key string) (string, bool) {
	for _, kv := range e.Environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

// SessionPID returns the pid of the padrun session this process runs
// inside, from PAD_SESSION_PID, or 0 when there is none: for a run, its
// outer session. It is the one reading of the variable: only a canonical
// positive decimal is a pid ("+5", "05" or " 5" are a usage error).
func (e Env) SessionPID() (int, error) {
	if !e.hasSessionPID {
		return 0, nil
	}
	v := e.sessionPID
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 || strconv.Itoa(n) != v { // canonical only: no sign, zeros or spaces
		return 0, usagef("PAD_SESSION_PID=%q is not a positive integer", v)
	}
	return n, nil
}

// ControlClient is the way to the padrun session this process runs inside,
// for a companion's hook: PADRUN_CONTROL, and PAD_SESSION_PID read by the
// one rule (a value that is not a pid names no session).
func (e Env) ControlClient() control.Client {
	pid, _ := e.SessionPID() // 0 when it names no session
	return control.Client{Socket: e.Control, SessionPID: pid}
}
