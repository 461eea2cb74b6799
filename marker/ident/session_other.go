//go:build !linux

package ident

// GroupProcs: only a Linux padrun records its child's group and session.
func GroupProcs(int, int, string) ([]int, error) { return nil, nil }

// Command names pid's program where the system says it: not here.
func Command(int) string { return "" }

// LockHolders: the processes holding a file cannot be listed here.
func LockHolders(string) []int { return nil }
