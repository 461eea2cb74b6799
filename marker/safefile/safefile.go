// Package safefile opens, reads, writes and locks the small files that
// padrun shares with other processes without following symlinks, blocking on
// FIFOs, or reading more than a bound.
package safefile

import "errors"

var (
	// ErrSymlink: the path is a symlink, which padrun never follows.
	ErrSymlink = errors.New("is a symlink: padrun will not follow it")
	// ErrNotRegular: the path is a folder, FIFO, socket or device.
	ErrNotRegular = errors.New("is not a regular file")
	// ErrTooLarge: the file is over the read bound.
	ErrTooLarge = errors.New("is larger than 64 KiB")
	// ErrBusy: another process holds the lock.
	ErrBusy = errors.New("lock busy")
	// ErrNoLocking: the filesystem does not support flock.
	ErrNoLocking = errors.New("the filesystem does not support flock")
)
