package registry

import (
	"errors"
	"io"
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

// readRecordFile reads a registry file as pad does: without following a
// symlink or blocking on a FIFO, regular files only, at most MaxSize bytes.
// A regular file that cannot be read still returns its info, so that its
// mtime can stand for its time.
func readRecordFile(path string) (recordFile, error) {
	f, err := openNoFollow(path)
	if err != nil {
		return unreadable(path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return unreadable(path, err)
	}
	if !fi.Mode().IsRegular() {
		return recordFile{}, errNotRecord
	}
	rf := recordFile{info: fi}
	if fi.Size() > MaxSize {
		return rf, errTooLarge
	}
	// Its size and one byte more, in one read; a file that grew meanwhile
	// is read on, up to the bound.
	b := make([]byte, fi.Size()+1)
	n, err := io.ReadFull(f, b)
	switch {
	case err == nil:
		rest, err := io.ReadAll(io.LimitReader(f, MaxSize+1-int64(n)))
		if err != nil {
			return rf, err
		}
		b = append(b, rest...)
		n = len(b)
	case err != io.ErrUnexpectedEOF && err != io.EOF:
		return rf, err
	}
	if n > MaxSize {
		return rf, errTooLarge
	}
	rf.data = b[:n]
	return rf, nil
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
	if info == nil || !os.SameFile(info, fi) {
		return false, nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	return true, nil
}
