// Package safefile opens, reads, writes and locks the small files that
// padrun shares with other processes without following symlinks, blocking on
// FIFOs, or reading more than a bound.
package safefile

import (
	"bytes"
	"errors"
)

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

// Ours tells whether b, the content of a file this process wrote, is still
// its own: the bytes it last wrote there (written, nil when unknown), or
// else, where another tool may have rewritten the same content in its own
// form, what parsed says of b. Readers of markers and records decide so.
func Ours(b, written []byte, parsed func([]byte) bool) bool {
	return written != nil && bytes.Equal(b, written) || parsed(b)
}
