//go:build !linux

package ident

// CgroupProcs: cgroups exist on Linux only, and only a Linux padrun records one.
func CgroupProcs(string) ([]int, error) { return nil, nil }

// IsCgroup2: cgroups exist on Linux only.
func IsCgroup2(string) bool { return false }

// GroupProcs: only a Linux padrun records its child's group and session.
func GroupProcs(int, int, string) ([]int, error) { return nil, nil }

// Command names pid's program where the system says it: not here.
func Command(int) string { return "" }

// LockHolders: the processes holding a file cannot be listed here.
func LockHolders(string) []int { return nil }
