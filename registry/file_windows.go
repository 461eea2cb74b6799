package registry

import (
	"errors"
	"os"
)

// openNoFollow opens path for reading like os.Open, but never through a
// symlink: errNotRecord. The name is checked again after the open.
func openNoFollow(path string) (*os.File, error) {
	before, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) || (err == nil && !before.Mode().IsRegular()) {
		return nil, errNotRecord
	}
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, errNotRecord
	}
	if err != nil {
		return nil, err
	}
	if after, err := f.Stat(); err != nil || !os.SameFile(before, after) {
		f.Close()
		return nil, errNotRecord
	}
	return f, nil
}
