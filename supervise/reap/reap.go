// Package reap keeps apart the two kinds of child padrun has: those it
// starts itself through os/exec (the etcd TLS helper, the fence), which
// their own Wait reaps, and the orphans of the session,
// which come to padrun as their subreaper and which nobody waits for.
// Orphans reaps the second kind and leaves the first alone: a wait(2) for
// any child would take an os/exec child's exit from its Wait, which then
// fails with "no child processes".
package reap

import (
	"os/exec"
	"sync"
)

var (
	// mu is held across an own child's fork and its entry in own, and
	// across every reap of orphans: no reap sees a child that is padrun's
	// own and not yet listed.
	mu  sync.Mutex
	own = map[int]bool{}
)

// Start starts cmd as a child of padrun's own: Orphans leaves it for
// Wait.
func Start(cmd *exec.Cmd) error {
	mu.Lock()
	defer mu.Unlock()
	if err := cmd.Start(); err != nil {
		return err
	}
	own[cmd.Process.Pid] = true
	return nil
}

// Wait waits for cmd, started by Start, as cmd.Wait does.
func Wait(cmd *exec.Cmd) error {
	err := cmd.Wait()
	mu.Lock()
	delete(own, cmd.Process.Pid)
	mu.Unlock()
	return err
}

// Own reports whether pid is a child that Start started and Wait has yet
// to reap.
func Own(pid int) bool {
	mu.Lock()
	defer mu.Unlock()
	return own[pid]
}
