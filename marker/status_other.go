//go:build !linux

package marker

import "github.com/padrun/padrun/marker/safefile"

// hasWaiters cannot see blocked waiters here: the lock file is always
// unlinked on release.
func hasWaiters(safefile.Handle) bool { return false }

// lockHolder cannot see other processes' locks here: the marker's verdict
// decides alone.
func lockHolder(string) (held bool, pid int, err error) { return false, 0, nil }
