// Package supervise runs the child: it finds and starts the command, forwards
// signals to it, enforces the grace period and the timeout, and reports how
// it ended.
package supervise

import (
	"io"
	"syscall"
)

// ExecError says the command could not be run.
type ExecError struct {
	Name          string
	NotExecutable bool // found but not executable (126); else not found (127)
	Err           error
}

func (e *ExecError) Error() string {
	if e.NotExecutable {
		return "supervise: " + e.Name + ": cannot execute: " + e.Err.Error()
	}
	return "supervise: " + e.Name + ": command not found"
}

func (e *ExecError) Unwrap() error { return e.Err }

// Spec says what to run and how to supervise it.
type Spec struct {
	Path string   // the executable, from LookPath
	Args []string // argv, Args[0] included
	Env  []string
	// Pty runs the child on a new pseudo-terminal.
	Pty bool
	// Record, when set, receives the session's output as the user sees it.
	Record io.Writer
	// Tree, when set, is the cgroup the child is born in.
	Tree *Tree
	// Inherit lists descriptors the child inherits at their own numbers,
	// as flock(1) hands its lock to the command: the session's locks.
	Inherit []uintptr
}

// Status is how the child ended.
type Status struct {
	Code     int            // exit code, when it exited
	Signal   syscall.Signal // the signal that killed it, or 0
	TimedOut bool           // --timeout ran out
}
