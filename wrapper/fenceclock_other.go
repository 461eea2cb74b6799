//go:build !linux

package wrapper

import "time"

// fenceClock is the clock of the fence's deadlines, in nanoseconds: the
// wall clock, which goes on while the machine sleeps, as the lease does.
func fenceClock() int64 { return time.Now().UnixNano() }
