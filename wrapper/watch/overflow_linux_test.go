package watch

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/padrun/padrun/wrapper/harness"
)

// told collects what a watcher that the test drives reports.
type told struct {
	claimed, unowned []string
	overflows        int
}

// drivenWatch is a watcher with no loop of its own: the test makes the
// changes, then reads them with read, as the loop would once it runs.
func drivenWatch(t *testing.T, ws ...harness.Watch) (*watcher, *told, func()) {
	t.Helper()
	got := &told{}
	w, err := newWatcher(ws, time.Now(), os.Getpid(), Events{
		Claim:    func(p string) { got.claimed = append(got.claimed, rel(ws[0].Dir, p)) },
		Unowned:  func(p, why string) { got.unowned = append(got.unowned, rel(ws[0].Dir, p)+": "+why) },
		Wrote:    func(string) {},
		Overflow: func([]string) { got.overflows++ },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.close)
	buf := make([]byte, 64<<10)
	return w, got, func() { w.readInotify(buf) }
}

func rel(dir, p string) string { r, _ := filepath.Rel(dir, p); return r }

// flood queues more events on dir's watch than the kernel keeps, none of
// a session file, so that the queue overflows and drops what comes next:
// writes to two files in turn (the kernel merges an event only with the
// one queued just before it).
func flood(t *testing.T, dir, prefix string) {
	t.Helper()
	b, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events")
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	var fds [2]*os.File
	for i := range fds {
		if fds[i], err = os.Create(filepath.Join(dir, prefix+strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
		defer fds[i].Close()
	}
	for i := 0; i < n+100; i++ {
		if _, err := fds[i%2].Write([]byte{'x'}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestWatch_Overflow_RescanClaimsTheLostFile(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "old.jsonl"), nil, 0o600)
	w, got, read := drivenWatch(t, harness.Watch{Dir: dir, Pattern: "*.jsonl"})
	holder(t, filepath.Join(dir, "kept.jsonl"), os.O_WRONLY) // before the flood: its event is queued
	flood(t, dir, "d")
	holder(t, filepath.Join(dir, "lost.jsonl"), os.O_WRONLY) // its event is dropped
	read()
	if strings.Join(got.claimed, " ") != "kept.jsonl lost.jsonl" || got.overflows != 1 {
		t.Fatalf("claimed %q, %d overflows told; want kept.jsonl and lost.jsonl, 1", got.claimed, got.overflows)
	}
	if len(got.unowned) > 0 || len(w.pending) > 0 {
		t.Fatalf("unowned %q, pending %v: a file there before the watch was judged", got.unowned, w.pending)
	}
}

func TestWatch_Overflow_RescanWatchesNewFolders(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "old"), 0o700)
	os.WriteFile(filepath.Join(dir, "old", "s.jsonl"), nil, 0o600)
	w, got, read := drivenWatch(t, harness.Watch{Dir: dir, Depth: 1, Pattern: "*.jsonl"})
	flood(t, dir, "d")
	os.Mkdir(filepath.Join(dir, "new"), 0o700)
	holder(t, filepath.Join(dir, "new", "s.jsonl"), os.O_WRONLY)
	read()
	if strings.Join(got.claimed, " ") != "new/s.jsonl" || got.overflows != 1 {
		t.Fatalf("claimed %q, %d overflows told; want new/s.jsonl, 1", got.claimed, got.overflows)
	}
	if len(w.pending) > 0 {
		t.Fatalf("pending %v: a file there before the watch was judged", w.pending)
	}
	// The folder made during the flood is watched from now on.
	holder(t, filepath.Join(dir, "new", "t.jsonl"), os.O_WRONLY)
	read()
	if strings.Join(got.claimed, " ") != "new/s.jsonl new/t.jsonl" || got.overflows != 1 {
		t.Fatalf("claimed %q, %d overflows told; want new/t.jsonl seen by its event", got.claimed, got.overflows)
	}
}

func TestWatch_Overflow_FloodDuringTheRescan(t *testing.T) {
	dir := t.TempDir()
	w, got, read := drivenWatch(t, harness.Watch{Dir: dir, Pattern: "*.jsonl"})
	flood(t, dir, "a")
	holder(t, filepath.Join(dir, "first.jsonl"), os.O_WRONLY)
	w.afterRescan = func() {
		w.afterRescan = nil
		// After the rescan listed the folder: only the next one finds it.
		flood(t, dir, "b")
		holder(t, filepath.Join(dir, "during.jsonl"), os.O_WRONLY)
	}
	read()
	if strings.Join(got.claimed, " ") != "first.jsonl during.jsonl" || got.overflows != 2 {
		t.Fatalf("claimed %q, %d overflows told; want first.jsonl and during.jsonl, 2", got.claimed, got.overflows)
	}
}

func TestParseDirents(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "sub"), 0o700)
	os.WriteFile(filepath.Join(dir, "f.jsonl"), nil, 0o600)
	var st unix.Stat_t
	unix.Stat(filepath.Join(dir, "f.jsonl"), &st)
	got := map[string]entry{}
	for _, e := range listDir(dir, func(string, bool) bool { return true }) {
		got[e.name] = e
	}
	if len(got) != 2 || !got["sub"].isDir || got["f.jsonl"].isDir || got["f.jsonl"].ino != st.Ino {
		t.Fatalf("listed %+v; want sub (a folder) and f.jsonl (inode %d)", got, st.Ino)
	}
}
