//go:build !linux

package cgroup

import "time"

// Session is a cgroup of the session's own: Linux only.
type Session struct {
	Path string
}

// New returns nil: there are no cgroups here.
func New(string) *Session { return nil }

// Make has nothing to make.
func (s *Session) Make() {}

// Stalled is 0: there is no pressure to read.
func (s *Session) Stalled() time.Duration { return 0 }

// Remove has nothing to remove.
func (s *Session) Remove() bool { return true }

// Left is a session cgroup: Linux only.
type Left struct {
	Path string
	Tag  string
	Made time.Time
}

// ListLeft finds none: there are no cgroups here.
func ListLeft() ([]Left, error) { return nil, nil }

// RemoveLeft has nothing to remove.
func RemoveLeft(string) (gone bool, procs []int, err error) { return true, nil, nil }
