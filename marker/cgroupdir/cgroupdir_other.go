//go:build !linux

package cgroupdir

// RemoveLeftover has nothing to remove.
func RemoveLeftover(string) {}

// Procs: cgroups exist on Linux only, and only a Linux padrun records one.
func Procs(string) ([]int, error) { return nil, nil }
