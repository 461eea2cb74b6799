package watch

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/padrun/padrun/wrapper/harness"
)

// BenchmarkListDir is what the watch's start pays per watched folder to
// note what it holds, by the folder's size: session files (all kept), and
// other entries (none kept).
func BenchmarkListDir(b *testing.B) {
	d := watched{w: harness.Watch{Pattern: "*.jsonl"}}
	for _, n := range []int{10, 1000} {
		dir := b.TempDir()
		for i := 0; i < n; i++ {
			os.WriteFile(filepath.Join(dir, strconv.Itoa(i)+".jsonl"), nil, 0o600)
		}
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				listDir(dir, d.matches)
			}
		})
	}
}
