//go:build !linux

package registry

import (
	"io"
	"os"
)

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

// sameFile reports whether a and b describe the same file.
func sameFile(a, b os.FileInfo) bool { return os.SameFile(a, b) }
