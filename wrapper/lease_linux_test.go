package wrapper

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestBreakers_NameTheOpenerOfABrokenLease: a process opening a leased
// file for writing waits in open(2), and /proc/locks names it as the
// breaker of padrun's lease, by the file's inode.
func TestBreakers_NameTheOpenerOfABrokenLease(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(p, []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := unix.FcntlInt(f.Fd(), unix.F_SETLEASE, unix.F_RDLCK); err != nil {
		t.Fatalf("F_SETLEASE: %v", err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	if got := breakers(os.Getpid()); len(got) != 0 {
		t.Fatalf("an unbroken lease has breakers: %v", got)
	}
	w := exec.Command("sh", "-c", `echo y >> "$1"`, "sh", p)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	var got []int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if got = breakers(os.Getpid())[st.Ino]; len(got) > 0 {
			break
		}
	}
	if !slices.Contains(got, w.Process.Pid) {
		t.Errorf("breakers = %v, want the writer %d", got, w.Process.Pid)
	}
	b, _ := os.ReadFile(p)
	if string(b) != "x\n" {
		t.Errorf("the writer wrote while the lease was held: %q", b)
	}
	f.Close() // the writer goes on
	if err := w.Wait(); err != nil {
		t.Fatal(err)
	}
}
