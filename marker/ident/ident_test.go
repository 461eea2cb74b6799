//go:build linux

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

func TestToken_AcceptsStringOrNumber(t *testing.T) {
	for in, want := range map[string]string{`"123"`: "123", `123`: "123", `"abc"`: "abc"} {
		var tok Token
		if err := tok.UnmarshalJSON([]byte(in)); err != nil || string(tok) != want {
			t.Errorf("%s: got %q, %v", in, tok, err)
		}
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

func TestProbe_DeadPid_IsDead(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if f, _ := Probe(cmd.Process.Pid, ""); f.Verdict != Dead || f.Fact != Gone {
		t.Fatalf("reaped pid: %+v, want dead, gone", f)
	}
}

func TestNormalizeID(t *testing.T) {
	const want = "34b40071a2c94c1e9f3b0d5e6f7a8b9c"
	for _, in := range []string{
		want,
		"34b40071-a2c9-4c1e-9f3b-0d5e6f7a8b9c",
		"34b40071-a2c9-4c1e-9f3b-0d5e6f7a8b9c\n",
		"34B40071-A2C9-4C1E-9F3B-0D5E6F7A8B9C",
		" \t34B40071A2C94C1E9F3B0D5E6F7A8B9C\r\n",
	} {
		if got := NormalizeID(in); got != want {
			t.Errorf("NormalizeID(%q) = %q, want %q", in, got, want)
		}
	}
	if NormalizeID("") != "" || NormalizeID(" \n") != "" {
		t.Error("an empty id must stay empty: it names no boot")
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

func TestOtherNamespace_EitherDiffers_LeftOutIsSame(t *testing.T) {
	for _, tt := range []struct{ pid, tm, want string }{
		{"1", "2", ""}, {"", "", ""}, {"1", "", ""}, {"", "2", ""},
		{"9", "2", "another pid namespace (9)"}, {"1", "9", "another time namespace (9)"},
	} {
		if got := OtherNamespace(tt.pid, tt.tm, "1", "2"); got != tt.want {
			t.Errorf("OtherNamespace(%q, %q, 1, 2) = %q, want %q", tt.pid, tt.tm, got, tt.want)
		}
	}
	if got := OtherNamespace("9", "9", "", ""); got != "" {
		t.Errorf("with the reader's left out = %q, want \"\"", got)
	}
}

// Names names the first few pids and counts the rest: wrapper and marker
// word their lists of processes with it.
func TestNames_FirstFewThenHowManyMore(t *testing.T) {
	dead := []int{1 << 30, 1<<30 + 1, 1<<30 + 2, 1<<30 + 3}
	if got, want := Names(dead, 3), "pid 1073741824, pid 1073741825, pid 1073741826, and 1 more"; got != want {
		t.Errorf("Names = %q, want %q", got, want)
	}
	if got, want := Names(dead[:2], 3), "pid 1073741824, pid 1073741825"; got != want {
		t.Errorf("Names = %q, want %q", got, want)
	}
}
