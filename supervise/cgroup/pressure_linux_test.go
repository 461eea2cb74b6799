package cgroup

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// pressure reads the "some" total of a PSI file, and 0 of anything else.
func TestPressure_SomeTotal(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		body string
		want time.Duration
	}{
		{"some avg10=1.00 avg60=0.50 avg300=0.10 total=1234567\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=99\n", 1234567 * time.Microsecond},
		{"some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", 0},
		{"full avg10=0.00 avg60=0.00 avg300=0.00 total=5\n", 0},
		{"some avg10=0.00 total=-3\n", 0},
		{"some avg10=0.00\n", 0},
		{"", 0},
	} {
		f := filepath.Join(dir, "cpu.pressure")
		if err := os.WriteFile(f, []byte(tc.body), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := pressure(f); got != tc.want {
			t.Errorf("pressure(%q) = %s, want %s", tc.body, got, tc.want)
		}
	}
	if got := pressure(filepath.Join(dir, "none")); got != 0 {
		t.Errorf("a missing file: %s", got)
	}
	s := &Session{Path: dir}
	if got := s.Stalled(); got != 0 { // cpu.pressure says 0, io.pressure is missing
		t.Errorf("Stalled = %s", got)
	}
	var none *Session
	if got := none.Stalled(); got != 0 {
		t.Errorf("nil Stalled = %s", got)
	}
}
