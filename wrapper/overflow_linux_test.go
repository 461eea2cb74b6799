package wrapper

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// floodRenames renames a file in dir to and fro more times than the
// kernel queues events of, so that an inotify watch of dir overflows and
// drops what comes next (each rename names the other file: no two events
// in a row are merged).
func floodRenames(t *testing.T, dir string) {
	t.Helper()
	b, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events")
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	names := [2]string{filepath.Join(dir, "flood-a"), filepath.Join(dir, "flood-b")}
	if err := os.WriteFile(names[0], nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n+100; i++ {
		if err := os.Rename(names[i%2], names[(i+1)%2]); err != nil {
			t.Fatal(err)
		}
	}
}

func receive[T any](t *testing.T, c <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(30 * time.Second):
		t.Fatalf("no %s within 30s", what)
		var zero T
		return zero
	}
}

// An overflow of the in-use notify's queue makes it look in every folder
// it watches, and say so: the lock made while events were dropped is found.
func TestInUseNotify_Overflow(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	found, entered, release, seen := stallFirst()
	overflowed := make(chan bool, 16)
	n := startInUseNotify(seen, func() { overflowed <- true })
	if n == nil {
		t.Fatal("no inotify")
	}
	defer n.stop()
	n.add(a)
	n.add(b)
	os.WriteFile(filepath.Join(a, "start"), nil, 0o600)
	receive(t, entered, "first event")
	floodRenames(t, a)
	os.WriteFile(filepath.Join(b, "inuse.1.lock"), nil, 0o600) // dropped
	close(release)
	receive(t, overflowed, "overflow told")
	for {
		if dir := receive(t, found, "look in "+b); dir == b {
			return
		}
	}
}

// An overflow of the follower's queue makes it check again, and say so:
// a rename of a held file while events were dropped is found.
func TestFollower_Overflow(t *testing.T) {
	dir := t.TempDir()
	checks, entered, release := 0, make(chan bool), make(chan bool)
	checked, overflowed := make(chan bool, 16), make(chan bool, 16)
	f, err := startFollower(func() []string {
		checks++
		switch {
		case checks == 3: // the loop waits here while the queue fills
			entered <- true
			<-release
		case checks > 3:
			checked <- true
		}
		return []string{filepath.Join(dir, "s.jsonl")}
	}, func() { overflowed <- true })
	if err != nil {
		t.Fatal(err)
	}
	defer f.stop()
	os.WriteFile(filepath.Join(dir, "s.jsonl"), nil, 0o600)
	receive(t, entered, "check of the new file")
	floodRenames(t, dir)
	os.Rename(filepath.Join(dir, "s.jsonl"), filepath.Join(dir, "t.jsonl")) // dropped
	close(release)
	receive(t, overflowed, "overflow told")
	receive(t, checked, "check after the overflow")
}

// TestClaimNotify_Overflow: the claim watch of copilot's session folders
// looks in every one of them again when the kernel's queue overflowed, so
// a lock written while events were lost is still claimed (docs/spec.md §5,
// rule 10). It fails with the overflow ignored.
func TestClaimNotify_Overflow(t *testing.T) {
	state := t.TempDir()
	a, b := filepath.Join(state, "a"), filepath.Join(state, "b")
	os.Mkdir(a, 0o700)
	os.Mkdir(b, 0o700)
	found, entered, release, seen := stallFirst()
	n := startClaimNotify(state, seen)
	if n == nil {
		t.Fatal("no inotify")
	}
	defer n.stop()
	os.WriteFile(filepath.Join(a, "start"), nil, 0o600)
	receive(t, entered, "first event")
	floodRenames(t, a)
	os.WriteFile(filepath.Join(b, "inuse.1.lock"), nil, 0o600) // dropped
	close(release)
	for {
		if dir := receive(t, found, "look in "+b); dir == b {
			return
		}
	}
}

// stallFirst is a notify callback that waits in its first call, which
// entered says, until release is closed or sent to, while the kernel's
// queue fills; every later call sends its folder to found.
func stallFirst() (found chan string, entered, release chan bool, seen func(string)) {
	found, entered, release = make(chan string, 16), make(chan bool), make(chan bool)
	first := true
	return found, entered, release, func(dir string) {
		if first {
			first = false
			entered <- true
			<-release
			return
		}
		found <- dir
	}
}
