package registry

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// FolderError is a registry folder padrun will not use.
type FolderError struct {
	Dir string
	Why string
}

func (e *FolderError) Error() string { return "registry: " + e.Dir + " " + e.Why }

// Hint says what to do about it.
func (e *FolderError) Hint() string {
	return "padrun keeps records only in a folder that no one else can write, and never changes the mode of a folder it did not create: " +
		"set " + EnvDir + " to a folder of your own (mkdir -m 0700 DIR), or unset it to use ~/.pad/sessions"
}

// Open returns the registry at dir. A missing folder is created 0700. The
// default folder (~/.pad/sessions) is tightened to 0700 when it is looser
// and the user's own, as pad does, unless a symlink leads to it. Any other
// folder that padrun did not create is never chmod'ed: one not owned by the
// user, or writable by group or others (a sticky /tmp included), is
// refused. The registry folder is the one named: a symlink there is
// refused, whatever its target.
func Open(dir string) (*Registry, error) {
	def, _ := defaultDir() // Best effort: without a home, no folder is the default.
	fi, err := os.Lstat(dir)
	if errors.Is(err, os.ErrNotExist) {
		// A folder padrun creates is 0700 and its own: the checks below pass.
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("registry: %w", err)
		}
		fi, err = os.Lstat(dir)
	}
	if err != nil {
		return nil, fmt.Errorf("registry: %w", err)
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return nil, &FolderError{dir, "is a symlink: padrun uses the folder named, never its target"}
	}
	if !fi.IsDir() {
		return nil, &FolderError{dir, "is not a folder"}
	}
	if err := checkFolder(dir, fi, dir == def, dir == def && !throughSymlink(dir)); err != nil {
		return nil, err
	}
	return &Registry{Dir: dir}, nil
}

// throughSymlink reports whether a symlink leads to dir, or whether that
// cannot be told: a folder padrun reaches through another's symlink is
// not padrun's to chmod.
func throughSymlink(dir string) bool {
	real, err := filepath.EvalSymlinks(dir)
	return err != nil || real != filepath.Clean(dir)
}
