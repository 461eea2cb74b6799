package registry

import (
	"errors"
	"os"
)

var (
	// errNotRecord: the path is gone, a symlink, or not a regular file. It
	// is no record at all: never listed, never deleted.
	errNotRecord = errors.New("not a record")
	errTooLarge  = errors.New("is larger than 64 KiB")
)

// recordFile is what a read of a registry file found.
type recordFile struct {
	data []byte      // nil when the file could not be read or is too large
	info os.FileInfo // the file's own: mode, mtime and identity
}

// unreadable is a registry file that could not be opened or examined: a
// regular file is still listed, with its mtime; anything else is no record.
func unreadable(path string, err error) (recordFile, error) {
	if errors.Is(err, errNotRecord) {
		return recordFile{}, err
	}
	fi, lerr := os.Lstat(path)
	if lerr != nil || !fi.Mode().IsRegular() {
		return recordFile{}, errNotRecord
	}
	return recordFile{info: fi}, err
}

// removeSame deletes path if it still names the file that was read as
// info; removed is false when it is gone or was replaced meanwhile.
func removeSame(path string, info os.FileInfo) (removed bool, err error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if info == nil || !sameFile(info, fi) {
		return false, nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	return true, nil
}
