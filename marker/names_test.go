package marker

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A hidden file's marker is .F.padrun.json, its lock F.live.lock like
// everyone's; other files keep F.live.json.
func TestPath_HiddenByPattern(t *testing.T) {
	dir := t.TempDir()
	g, p := filepath.Join(dir, "session-1.jsonl"), filepath.Join(dir, "s.jsonl")
	if got, want := Path(g), filepath.Join(dir, ".session-1.jsonl.padrun.json"); got != want {
		t.Errorf("Path(%s) = %s, want %s", g, got, want)
	}
	if got, want := Path(p), p+".live.json"; got != want {
		t.Errorf("Path(%s) = %s, want %s", p, got, want)
	}
	if lockPath(g) != g+".live.lock" {
		t.Errorf("lock of %s is %s, want the same rule as every file's", g, lockPath(g))
	}
	if !IsGuardFile(Path(g)) || IsGuardFile(g) {
		t.Errorf("IsGuardFile: a hidden marker is a guard file, a session file is not")
	}
}

// A marker under either name is read, judged and unlocked: one written by
// a padrun that names the file's marker the other way, or by another tool.
func TestRead_Unlock_EitherName(t *testing.T) {
	for _, name := range []string{"session-1.jsonl", "s.jsonl"} {
		file := filepath.Join(t.TempDir(), name)
		other := markerPaths(file)[1]
		m := newMarker(file)
		m.Pid = 999999999 // dead
		if err := system().write(other, m.encode(), true, time.Now()); err != nil {
			t.Fatal(err)
		}
		if got, err := Read(file); err != nil || got.Nonce != m.Nonce {
			t.Fatalf("%s: Read with the marker at %s: %v, %v", name, filepath.Base(other), got, err)
		}
		if st := Inspect(file, self, time.Now()); st.State != Stale {
			t.Errorf("%s: Inspect = %v (%s), want stale", name, st.State, st.Reason)
		}
		if _, err := Unlock(file, self, false); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Lstat(other); !os.IsNotExist(err) {
			t.Errorf("%s: unlock left %s", name, filepath.Base(other))
		}
	}
}

// One file is held under one lock whatever its marker's name: a padrun
// that sees the other name's marker is refused by the lock.
func TestAcquire_HiddenMarker_OneLock(t *testing.T) {
	file := filepath.Join(t.TempDir(), "session-1.jsonl")
	l, err := TryAcquire(file, newMarker(file), self)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if _, err := os.Lstat(filepath.Join(filepath.Dir(file), ".session-1.jsonl.padrun.json")); err != nil {
		t.Errorf("hidden marker: %v", err)
	}
	if _, err := os.Lstat(file + ".live.json"); !os.IsNotExist(err) {
		t.Errorf("%s.live.json written beside a hidden marker", file)
	}
	if _, err := TryAcquire(file, newMarker(file), self); !IsHeld(err) {
		t.Fatalf("second Acquire: %v, want held", err)
	}
}
