//go:build !linux

package supervise

import "time"

// Tree is a cgroup of the session's own: Linux only.
type Tree struct {
	Path string
}

// NewTree returns nil: there are no cgroups here.
func NewTree(string) *Tree { return nil }

// Make has nothing to make.
func (t *Tree) Make() {}

// Remove has nothing to remove.
func (t *Tree) Remove() bool { return true }

// LeftTree is a session cgroup: Linux only.
type LeftTree struct {
	Path string
	Tag  string
	Made time.Time
}

// LeftTrees finds none: there are no cgroups here.
func LeftTrees() ([]LeftTree, error) { return nil, nil }

// RemoveLeftTree has nothing to remove.
func RemoveLeftTree(string) (gone bool, procs []int, err error) { return true, nil, nil }
