package wrapper

import (
	"fmt"
	"os/exec"
	"runtime"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/padrun/padrun/marker/ident"
)

// BenchmarkOutsideLook is the pass over /proc that looks for writers
// outside padrun (docs/spec.md §5 rule 9), with 500 more processes running
// (sleeping children): its median, against the goal of 1 ms.
// go test ./wrapper -run '^$' -bench OutsideLook -benchtime 200x
func BenchmarkOutsideLook(b *testing.B) {
	self := ident.ReadSelf()
	for _, extra := range []int{0, 500} {
		b.Run(fmt.Sprintf("procs+%d", extra), func(b *testing.B) {
			for range extra {
				cmd := exec.Command("sleep", "600")
				if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			}
			var d, cpu []time.Duration
			found := 0
			runtime.LockOSThread() // the thread's CPU time is the pass's
			defer runtime.UnlockOSThread()
			b.ResetTimer()
			for range b.N {
				start, startCPU := time.Now(), threadCPU()
				ws, err := procWriters(self)
				if err != nil {
					b.Fatal(err)
				}
				d, cpu = append(d, time.Since(start)), append(cpu, threadCPU()-startCPU)
				found = len(ws)
			}
			b.StopTimer()
			slices.Sort(d)
			slices.Sort(cpu)
			b.ReportMetric(float64(d[len(d)/2].Microseconds()), "median-µs")
			// On a loaded machine the wall time waits for the CPU too.
			b.ReportMetric(float64(cpu[len(cpu)/2].Microseconds()), "median-cpu-µs")
			// Each harness process found is read by its adapter: other
			// runs' harnesses on the machine weigh on the median.
			b.ReportMetric(float64(found), "harnesses")
		})
	}
}

// threadCPU is the CPU time of the calling thread.
func threadCPU() time.Duration {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) // Best effort: zero where it fails.
	return time.Duration(ts.Nano())
}
