package watch

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// holder starts a process that holds path open with flag as its fd 3, and
// returns its pid. The test's own copy of the descriptor is closed.
func holder(t *testing.T, path string, flag int) int {
	t.Helper()
	f, err := os.OpenFile(path, flag|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sleep", "60")
	cmd.ExtraFiles = []*os.File{f}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd.Process.Pid
}

func TestOwnership_WriterInTheTree_IsOurs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	holder(t, path, os.O_WRONLY|os.O_APPEND)
	k, _ := keyOf(path)
	if ours, foreign := writers(k, os.Getpid()); !ours || foreign {
		t.Fatalf("a child writing the file: ours %v, foreign %v; want ours only", ours, foreign)
	}
}

func TestOwnership_WriterOutsideTheTree_IsForeign(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	holder(t, path, os.O_RDWR)
	other := holder(t, filepath.Join(t.TempDir(), "other"), os.O_RDONLY) // a root whose tree does not write
	k, _ := keyOf(path)
	if ours, foreign := writers(k, other); ours || !foreign {
		t.Fatalf("a writer outside the tree: ours %v, foreign %v; want foreign only", ours, foreign)
	}
}

func TestOwnership_ReaderIsNoProof(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	holder(t, path, os.O_RDONLY)
	k, _ := keyOf(path)
	if ours, foreign := writers(k, os.Getpid()); ours || foreign {
		t.Fatalf("a reader only: ours %v, foreign %v; want neither", ours, foreign)
	}
}

func TestOwnership_SameInodeOtherName_IsAnotherFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	holder(t, path, os.O_WRONLY)
	k, _ := keyOf(path)
	k.name = "t.jsonl"
	if ours, _ := writers(k, os.Getpid()); ours {
		t.Fatal("a file under another name counted as the same file")
	}
}

func TestInTree(t *testing.T) {
	pid := holder(t, filepath.Join(t.TempDir(), "x"), os.O_RDONLY)
	if got := inTree(pid, os.Getpid()); got != inside {
		t.Errorf("own child: %v, want inside", got)
	}
	if got := inTree(os.Getpid(), pid); got != outside {
		t.Errorf("the parent of root: %v, want outside", got)
	}
	if got := inTree(1<<22+12345, os.Getpid()); got != gone {
		t.Errorf("no such pid: %v, want gone", got)
	}
	// OfTree, the in-use locks' question, is inside alone.
	if !OfTree(pid, os.Getpid()) || OfTree(os.Getpid(), pid) || OfTree(1<<22+12345, os.Getpid()) {
		t.Errorf("OfTree: own child %v, parent of root %v, no such pid %v; want true, false, false",
			OfTree(pid, os.Getpid()), OfTree(os.Getpid(), pid), OfTree(1<<22+12345, os.Getpid()))
	}
}

func TestWriteFlags(t *testing.T) {
	for in, want := range map[string]bool{
		"pos:\t0\nflags:\t02102001\nmnt_id:\t1\n": true,  // O_WRONLY|O_APPEND|O_CREAT
		"pos:\t0\nflags:\t0100002\n":              true,  // O_RDWR
		"pos:\t0\nflags:\t02100000\n":             false, // O_RDONLY
		"pos:\t0\n":                               false,
	} {
		if got := writeFlags(in); got != want {
			t.Errorf("%q: %v, want %v", in, got, want)
		}
	}
}
