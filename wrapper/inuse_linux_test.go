package wrapper

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/padrun/padrun/marker/ident"
	"github.com/padrun/padrun/wrapper/harness"
)

// TestJudgeInUse: an in-use lock's writer is alive while its pid names a
// process that started before the lock was written; a gone pid, or one
// whose process started after the lock (reused), is dead.
func TestJudgeInUse(t *testing.T) {
	now := time.Now()
	if j := judgeInUse(harness.InUseLock{Pid: os.Getpid(), Written: now}); j.Verdict != ident.Alive {
		t.Errorf("this process, lock written now: %v", j)
	}
	if j := judgeInUse(harness.InUseLock{Pid: os.Getpid(), Written: now.Add(-time.Hour)}); j.Verdict != ident.Dead {
		t.Errorf("this process, lock written an hour before it started: %v, want dead (reused)", j)
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if j := judgeInUse(harness.InUseLock{Pid: cmd.Process.Pid, Written: now}); j.Verdict != ident.Dead {
		t.Errorf("a reaped pid: %v, want dead", j)
	}
	started, ok := startedAt(os.Getpid())
	if !ok || started.After(time.Now()) || time.Since(started) > 10*time.Minute {
		t.Errorf("startedAt(self) = %v, %v: want a moment before now", started, ok)
	}
}
