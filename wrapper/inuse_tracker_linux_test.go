package wrapper

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/padrun/padrun/marker"
)

// copilotSession is a copilot session file in a folder of its own, and
// writes the in-use locks of pids beside it.
func copilotSession(t *testing.T) (file string, lock func(pid int) string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "session-state", "0a1b")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	file = filepath.Join(dir, "events.jsonl")
	return file, func(pid int) string {
		p := filepath.Join(dir, "inuse."+strconv.Itoa(pid)+".lock")
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
}

func pathExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// TestInUseTracker_ForeignWriterRefuses: a live writer outside the run's
// tree holds the file, as a foreign session does; a dead one does not, and
// neither is the run's to remove.
func TestInUseTracker_ForeignWriterRefuses(t *testing.T) {
	file, lock := copilotSession(t)
	tr := &inUseTracker{root: os.Getpid(), log: zerolog.Nop()}
	foreign := lock(os.Getppid())
	err := tr.held(file)
	var held *marker.HeldError
	if !errors.As(err, &held) || held.Kind != marker.HeldPolled || held.Holder.Pid != os.Getppid() {
		t.Fatalf("a live foreign writer's lock: %v, want a polled refusal naming it", err)
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(foreign); err != nil {
		t.Fatal(err)
	}
	gone := lock(dead.Process.Pid)
	if err := tr.held(file); err != nil {
		t.Fatalf("a dead writer's lock refused the file: %v", err)
	}
	tr.remove()
	if !pathExists(gone) {
		t.Fatal("a lock the run's tree did not write was removed")
	}
}

// TestInUseTracker_OwnLocksRemovedOnceDead: the locks the run's tree
// wrote hold nothing against it; at the run's end those whose writer is
// dead go, with what the harness wrote beside them, and a living
// writer's stay.
func TestInUseTracker_OwnLocksRemovedOnceDead(t *testing.T) {
	file, lock := copilotSession(t)
	tr := &inUseTracker{root: os.Getpid(), log: zerolog.Nop()}
	tr.watchDir(file) // no prompt watch: nothing
	mine := lock(os.Getpid())
	child := exec.Command("sleep", "60")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { child.Process.Kill(); child.Wait() })
	childs := lock(child.Process.Pid)
	hold := filepath.Join(filepath.Dir(file), "inuse."+strconv.Itoa(child.Process.Pid)+".hold")
	if err := os.WriteFile(hold, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := tr.held(file); err != nil {
		t.Fatalf("the run's own locks refused its file: %v", err)
	}
	tr.learn([]string{file}) // again: known already
	if len(tr.own) != 2 {
		t.Fatalf("own locks %v, want the two of the run's tree", tr.own)
	}
	child.Process.Kill()
	child.Wait()
	tr.remove()
	if pathExists(childs) || pathExists(hold) {
		t.Fatal("the dead writer's lock, or what it wrote beside it, was left")
	}
	if !pathExists(mine) {
		t.Fatal("a living writer's lock was removed")
	}
	if _, ok := tr.own[mine]; !ok || len(tr.own) != 1 {
		t.Fatalf("own locks once removed %v, want the living writer's", tr.own)
	}
}

// TestClaimInUse_RefusedLockRemoved: a harness that opens a session
// another run holds is ended before it appends, and the in-use lock it
// wrote goes with the run's end, however soon its kill is reaped (here at
// once, inside the kill: the lock is the run's only while its writer
// lives to prove it).
func TestClaimInUse_RefusedLockRemoved(t *testing.T) {
	s, _ := testSession(t, testControlDir(t))
	s.inUse = inUseTracker{root: s.self.Pid, log: zerolog.Nop()}
	file, lock := copilotSession(t)
	other := marker.New(s.self, "", uuid.NewString(), time.Now())
	l, err := marker.TryAcquire(file, other, s.self) // a second open file: its flock is another holder's
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	child := exec.Command("sleep", "60")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { child.Process.Kill(); child.Wait() })
	s.kill = func() { child.Process.Kill(); child.Wait() }
	written := lock(child.Process.Pid)
	s.claimInUse(filepath.Dir(file))
	if !marker.IsHeld(s.stoppedWhy()) {
		t.Fatalf("the harness opened a held session: stopped for %v, want the refusal", s.stoppedWhy())
	}
	s.inUse.remove()
	if pathExists(written) {
		t.Fatal("the in-use lock of the harness the run ended was left")
	}
}

// TestClaimInUse_ClaimsOnce: an in-use lock the run's tree writes beside a
// free session file claims it, once, and makes it the harness's current
// session; a lock of a process outside the tree claims nothing.
func TestClaimInUse_ClaimsOnce(t *testing.T) {
	s, _ := testSession(t, testControlDir(t))
	s.inUse = inUseTracker{root: s.self.Pid, log: zerolog.Nop()}
	file, lock := copilotSession(t)
	foreign := lock(os.Getppid())
	s.claimInUse(filepath.Dir(file))
	if s.inUse.claimed(file) || pathExists(marker.Path(file)) {
		t.Fatal("a lock outside the run's tree claimed its session")
	}
	if err := os.Remove(foreign); err != nil { // a live foreign writer's would refuse it
		t.Fatal(err)
	}
	child := exec.Command("sleep", "60")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { child.Process.Kill(); child.Wait() })
	lock(child.Process.Pid)
	s.claimInUse(filepath.Dir(file))
	m, err := marker.Read(file)
	if err != nil || m.Pid != s.self.Pid {
		t.Fatalf("the session the tree's lock names is not held: %+v, %v", m, err)
	}
	if !s.inUse.claimed(file) || s.current != file {
		t.Fatalf("claimed %v, current %q: want the claimed file current", s.inUse.claimed(file), s.current)
	}
	s.claimInUse(filepath.Dir(file)) // again: claimed already
	if len(s.files()) != 1 {
		t.Fatalf("held %v after a second look, want the one file", s.files())
	}
}
