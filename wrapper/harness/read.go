package harness

import (
	"errors"
	"fmt"
	"math"
	"os"

	"github.com/padrun/padrun/marker/safefile"
)

// Session files and harness settings may be anyone's (a shared
// --session-dir, a sudo run with another user's HOME): each is opened as
// hostile (docs/spec.md §14), never through a symlink, never blocking on a FIFO, a
// regular file of the user's or root's only, and bounded.
const (
	// maxSettings bounds a harness's settings file: pi's is a few KiB.
	maxSettings = 4 << 20
	// maxSession bounds a session file read whole: a larger one is passed
	// over, as unreadable, and the harness then gets the file padrun pins.
	maxSession = 256 << 20
)

// openSession opens a session file to read a part of it, bounded by the
// reader.
func openSession(path string) (*os.File, error) {
	return safefile.OpenTrusted(path, math.MaxInt64)
}

// readSession reads a whole session file, at most maxSession bytes.
func readSession(path string) ([]byte, error) {
	return safefile.ReadTrusted(path, maxSession)
}

// readSettings reads a harness's settings file. A missing or unreadable
// one is nil, as the harness reads it; one that another user could have
// planted is an error: the harness would read it, padrun cannot.
func readSettings(name, path string) ([]byte, error) {
	b, err := safefile.ReadTrusted(path, maxSettings)
	var hostile *safefile.HostileError
	switch {
	case errors.As(err, &hostile):
		return nil, fmt.Errorf("harness: %s: %w", name, err)
	case err != nil:
		return nil, nil
	}
	return b, nil
}
