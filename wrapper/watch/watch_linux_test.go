package watch

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/padrun/padrun/wrapper/harness"
)

// verdicts collects what a watcher reports.
type verdicts struct {
	claimed, unowned chan string
}

func startWatch(t *testing.T, dir string) verdicts {
	t.Helper()
	v := verdicts{make(chan string, 16), make(chan string, 16)}
	stop, _, err := watchTree([]harness.Watch{{Dir: dir, Pattern: "*.jsonl"}}, time.Now(), os.Getpid(), Events{
		Claim:   func(p string) { v.claimed <- filepath.Base(p) },
		Unowned: func(p, why string) { v.unowned <- filepath.Base(p) + ": " + why },
		Wrote:   func(string) {},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return v
}

// orphan runs script in a process that waits until its parent has exited,
// so that it belongs to no tree of the test's, and returns its pid.
func orphan(t *testing.T, script string) int {
	t.Helper()
	out, err := exec.Command("sh", "-c", "(while kill -0 $$ 2>/dev/null; do :; done; "+script+") >/dev/null 2>&1 & echo $!").Output()
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	return pid
}

func within(t *testing.T, c chan string, what string) string {
	t.Helper()
	select {
	case s := <-c:
		return s
	case <-time.After(30 * time.Second):
		t.Fatalf("no %s within 30s", what)
		return ""
	}
}

func TestWatch_ClaimsAFileItsTreeWrites(t *testing.T) {
	dir := t.TempDir()
	v := startWatch(t, dir)
	cmd := exec.Command("sh", "-c", "exec 3>>"+filepath.Join(dir, "mine.jsonl")+"; echo ready; read x")
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { in.Close(); cmd.Wait() }()
	bufio.NewReader(out).ReadString('\n')
	if got := within(t, v.claimed, "claim"); got != "mine.jsonl" {
		t.Fatalf("claimed %s", got)
	}
}

func TestWatch_LeavesAFileAnotherProcessWrites(t *testing.T) {
	dir := t.TempDir()
	v := startWatch(t, dir)
	orphan(t, "exec 3>>"+filepath.Join(dir, "theirs.jsonl")+"; sleep 60")
	got := within(t, v.unowned, "verdict")
	if got != "theirs.jsonl: "+WhyForeign {
		t.Fatalf("got %q, want the file left as another process's", got)
	}
	select {
	case c := <-v.claimed:
		t.Fatalf("claimed %s", c)
	default:
	}
}
