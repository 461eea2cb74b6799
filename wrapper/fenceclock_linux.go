package wrapper

import "golang.org/x/sys/unix"

// fenceClock is the clock of the fence's deadlines, in nanoseconds:
// CLOCK_BOOTTIME, which counts a suspended machine's sleep as the lease in
// etcd does (Go's monotonic clock does not).
func fenceClock() int64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts) != nil {
		return 0
	}
	return ts.Nano()
}
