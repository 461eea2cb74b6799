package safefile

import (
	"fmt"
	"io/fs"
)

// HostileError is a file that another user could have planted and that
// padrun will not read or write: a symlink, anything but a regular file, a
// file of someone else, or one over the bound. Its text names the path and
// why, on one line.
type HostileError struct {
	Path string
	Why  string
	Err  error // ErrSymlink, ErrNotRegular, ErrTooLarge, or nil
}

func (e *HostileError) Error() string { return e.Path + " " + e.Why }
func (e *HostileError) Unwrap() error { return e.Err }

// kind names what a file that is not a regular file is.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	}
	return "not a file"
}

func notRegular(path string, m fs.FileMode) *HostileError {
	return &HostileError{path, "is not a regular file (" + kind(m) + ")", ErrNotRegular}
}

func symlink(path string) *HostileError {
	return &HostileError{path, ErrSymlink.Error(), ErrSymlink}
}

func tooLarge(path string, max int64) *HostileError {
	return &HostileError{path, fmt.Sprintf("is larger than %s", size(max)), ErrTooLarge}
}

func size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
