package cgroup

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/padrun/padrun/marker/cgroupdir"
)

func newSession(t *testing.T, tag string) *Session {
	s := New(tag)
	if s == nil {
		if os.Getenv("CI") != "" {
			t.Fatal("no cgroup v2 of padrun's own can be made here, and CI is set")
		}
		t.Skip("no cgroup v2 of padrun's own can be made here (needs root or a delegated subtree)")
	}
	s.Make()
	t.Cleanup(func() { s.Remove() })
	return s
}

// A session cgroup is named Prefix+tag; ListLeft lists only those so named
// and RemoveLeftover removes only those: padrun touches no other cgroup.
func TestPrefix_NamesListsAndBoundsRemoval(t *testing.T) {
	tag := "test-" + strconv.Itoa(os.Getpid())
	s := newSession(t, tag)
	if filepath.Base(s.Path) != Prefix+tag {
		t.Fatalf("the session's cgroup is %s, want %s", s.Path, Prefix+tag)
	}
	other := filepath.Join(filepath.Dir(s.Path), "other-"+tag)
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(other)
	left, err := ListLeft()
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(left, func(l Left) bool { return l.Path == s.Path }); i < 0 || left[i].Tag != tag {
		t.Errorf("ListLeft %v lacks %s with tag %s", left, s.Path, tag)
	}
	if slices.ContainsFunc(left, func(l Left) bool { return l.Path == other }) {
		t.Errorf("ListLeft lists %s, which padrun did not name", other)
	}
	cgroupdir.RemoveLeftover(other)
	if _, err := os.Stat(other); err != nil {
		t.Errorf("RemoveLeftover removed %s, which padrun did not name: %v", other, err)
	}
	cgroupdir.RemoveLeftover(s.Path)
	if _, err := os.Stat(s.Path); !os.IsNotExist(err) {
		t.Errorf("RemoveLeftover left the empty %s: %v", s.Path, err)
	}
}

// Only a folder on a cgroup v2 filesystem is a cgroup: a look at any other
// proves nothing and is an error.
func TestMagic_OnlyCgroup2IsACgroup(t *testing.T) {
	s := newSession(t, "test-magic-"+strconv.Itoa(os.Getpid()))
	if !cgroupdir.IsV2(s.Path) {
		t.Errorf("%s is not taken for a cgroup v2 folder", s.Path)
	}
	if pids, err := cgroupdir.Procs(s.Path); err != nil || len(pids) != 0 {
		t.Errorf("Procs of the empty session cgroup = %v, %v", pids, err)
	}
	plain := t.TempDir()
	if cgroupdir.IsV2(plain) {
		t.Errorf("%s is taken for a cgroup v2 folder", plain)
	}
	if _, err := cgroupdir.Procs(plain); err == nil {
		t.Errorf("Procs of %s, no cgroup, proved it empty", plain)
	}
	os.Mkdir(filepath.Join(plain, Prefix+"x"), 0o700)
	cgroupdir.RemoveLeftover(filepath.Join(plain, Prefix+"x"))
	if _, err := os.Stat(filepath.Join(plain, Prefix+"x")); err != nil {
		t.Errorf("RemoveLeftover removed a folder named as padrun names them off cgroup v2: %v", err)
	}
}
