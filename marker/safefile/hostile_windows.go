package safefile

import (
	"errors"
	"io"
	"io/fs"
	"os"
)

// OpenTrusted opens a file for reading, refusing a symlink, anything but a
// regular file, and a file over max bytes. Owners are the ACL's here.
func OpenTrusted(path string, max int64) (*os.File, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if err := plain(path, fi); err != nil {
		return nil, err
	}
	if fi.Size() > max {
		return nil, tooLarge(path, max)
	}
	return os.Open(path)
}

// ReadTrusted reads a file with OpenTrusted's rules.
func ReadTrusted(path string, max int64) ([]byte, error) {
	f, err := OpenTrusted(path, max)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, tooLarge(path, max)
	}
	return b, nil
}

// OpenOutput opens path for padrun's own output, refusing a symlink or
// anything but a regular file; trunc empties it, else writes append.
func OpenOutput(path string, trunc bool) (*os.File, bool, error) {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		return f, err == nil, err
	case err != nil:
		return nil, false, err
	}
	if err := plain(path, fi); err != nil {
		return nil, false, err
	}
	flags := os.O_WRONLY | os.O_APPEND
	if trunc {
		flags = os.O_WRONLY | os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o600)
	return f, false, err
}

func plain(path string, fi os.FileInfo) error {
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		return symlink(path)
	case !fi.Mode().IsRegular():
		return notRegular(path, fi.Mode())
	}
	return nil
}

// TrustedProgram checks a program padrun runs (a helper beside padrun): a
// regular file, not a symlink. Owners are the ACL's here.
func TrustedProgram(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	return plain(path, fi)
}
