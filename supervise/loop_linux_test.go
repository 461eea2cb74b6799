package supervise

import (
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// A child stopped on its own terminal is not taken for ended: its stop is
// consumed and Supervise goes on until it exits.
func TestSupervise_PtyStopIsNotAnEnd(t *testing.T) {
	s, readyFile := helper(t, "trap-term")
	s.Pty = true
	c, err := Start(s)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	waitReady(t, readyFile)
	sigs := make(chan os.Signal, 3)
	sigs <- syscall.SIGSTOP
	stopped := false
	st := c.Supervise(sigs, time.Minute, 0, Job{Every: time.Millisecond, Run: func(time.Time) time.Duration {
		if !stopped && procState(c.Pid) == "T" {
			stopped = true
			sigs <- syscall.SIGCONT
			sigs <- syscall.SIGTERM
		}
		return 0
	}})
	if !stopped || st.Code != 0 || st.Signal != 0 {
		t.Fatalf("stopped %v, status %+v; want a stop, then exit 0 on TERM", stopped, st)
	}
}

func procState(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	s := string(b)
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == ')' && i+2 < len(s) {
			return s[i+2 : i+3]
		}
	}
	return ""
}
