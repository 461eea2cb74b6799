package wrapper

import (
	"fmt"
	"os/exec"
	"slices"
	"testing"
	"time"

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
			var d []time.Duration
			found := 0
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				ws, err := procWriters(self)
				if err != nil {
					b.Fatal(err)
				}
				d = append(d, time.Since(start))
				found = len(ws)
			}
			b.StopTimer()
			slices.Sort(d)
			b.ReportMetric(float64(d[len(d)/2].Microseconds()), "median-µs")
			// Each harness process found is read by its adapter: other
			// runs' harnesses on the machine weigh on the median.
			b.ReportMetric(float64(found), "harnesses")
		})
	}
}
