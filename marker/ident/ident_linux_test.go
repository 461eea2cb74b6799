package ident

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func TestParseStat_CommWithSpacesAndParen(t *testing.T) {
	rest := " S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 987654 20 21"
	for _, comm := range []string{"(pi)", "(a b)", "(x) y)", "())", "(:) R 1 2 (3)"} {
		state, start, ok := parseStat([]byte("1234 " + comm + rest))
		if !ok || state != 'S' || start != "987654" {
			t.Errorf("comm %q: got %c %q %v, want S 987654 true", comm, state, start, ok)
		}
	}
	for _, bad := range []string{"", "1234 (x", "1234 (x) S 1 2", "1234 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 notanumber"} {
		if _, _, ok := parseStat([]byte(bad)); ok {
			t.Errorf("%q parsed, want a failure", bad)
		}
	}
}

func TestStartToken_IsField22OfOwnStat(t *testing.T) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Fatal(err)
	}
	_, want, _ := parseStat(b)
	got, err := StartToken(os.Getpid())
	if err != nil || got != want {
		t.Fatalf("StartToken = %q, %v; want %q", got, err, want)
	}
}

func TestReadSelf_ReadsEveryToken(t *testing.T) {
	s := ReadSelf()
	if s.Pid != os.Getpid() || s.StartToken == "" || s.BootID == "" || s.PidNamespace == "" {
		t.Fatalf("ReadSelf = %+v: missing tokens", s)
	}
	if _, err := strconv.ParseUint(string(s.PidNamespace), 10, 64); err != nil {
		t.Fatalf("pid namespace %q is not an inode number", s.PidNamespace)
	}
	if _, err := os.Stat("/etc/machine-id"); err == nil && s.MachineID == "" {
		t.Fatal("machine id not read")
	}
}

func TestParentPid_IsOurParent(t *testing.T) {
	if got, err := ParentPid(os.Getpid()); err != nil || got != os.Getppid() {
		t.Fatalf("ParentPid = %d, %v; want %d", got, err, os.Getppid())
	}
	if _, err := ParentPid(-1); err == nil {
		t.Fatal("ParentPid(-1) read a stat file")
	}
}

func TestReadSelf_TimeNamespaceIsInodeOfNsTime(t *testing.T) {
	fi, err := os.Stat("/proc/self/ns/time")
	if err != nil {
		t.Skipf("no time namespaces on this kernel: %v", err)
	}
	want := strconv.FormatUint(fi.Sys().(*syscall.Stat_t).Ino, 10)
	if got := string(ReadSelf().TimeNamespace); got != want {
		t.Fatalf("TimeNamespace = %q, want %q", got, want)
	}
}

// The parent is field 4, counted after the last ')': a command name may
// hold spaces, digits and parentheses. Every ppid in padrun is read here.
func TestParentPid_CommWithSpacesAndParen(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep(1) to name oddly")
	}
	odd := filepath.Join(t.TempDir(), "x) 9 9 (y")
	if err := os.Symlink(sleep, odd); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(odd, "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/stat")
	if err != nil || !strings.Contains(string(b), "(x) 9 9 (y)") {
		t.Fatalf("the child's stat line %q does not hold its odd name", b)
	}
	if got, err := ParentPid(cmd.Process.Pid); err != nil || got != os.Getpid() {
		t.Fatalf("ParentPid = %d, %v; want %d", got, err, os.Getpid())
	}
}
