//go:build unix && !linux

package registry

import (
	"errors"
	"os"
	"syscall"
)

// openNoFollow opens path for reading like os.Open, but never through a
// symlink and without blocking on a FIFO: either is errNotRecord.
func openNoFollow(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	switch {
	case err == nil:
		return f, nil
	case errors.Is(err, os.ErrNotExist), errors.Is(err, syscall.ELOOP), errors.Is(err, syscall.ENXIO):
		return nil, errNotRecord
	}
	return nil, err
}
