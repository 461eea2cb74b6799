package marker

// Marker I/O: reading a marker bounded, publishing one whole.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/padrun/padrun/marker/ident"
	"github.com/padrun/padrun/marker/safefile"
)

// Read reads and parses the marker of file, bounded to maxSize. A missing
// marker is errMarkerAbsent; one that cannot be judged (a symlink, not a
// regular file, too large, not a marker), an *unreadableError; any other
// error is padrun's own.
func Read(file string) (*Marker, error) {
	var (
		path  string
		b     []byte
		mtime time.Time
		err   error
	)
	for _, path = range markerPaths(file) {
		if b, mtime, err = safefile.ReadBounded(path, maxSize); !absent(err) {
			break
		}
	}
	if absent(err) {
		err = os.ErrNotExist
	}
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, errMarkerAbsent
	case errors.Is(err, safefile.ErrSymlink), errors.Is(err, safefile.ErrNotRegular), errors.Is(err, safefile.ErrTooLarge):
		return nil, &unreadableError{path, err.Error()}
	case err != nil:
		// Out of descriptors or memory, an I/O error: padrun's own
		// failure, never a fact about the marker's holder.
		return nil, fmt.Errorf("marker: read %s: %w", path, err)
	}
	m, err := parse(b)
	if err != nil {
		return nil, &unreadableError{path, strings.TrimPrefix(err.Error(), "marker: ")}
	}
	m.ModTime = mtime
	return m, nil
}

// publish writes m as file's marker and returns the bytes it wrote. It
// first removes the temp files that dead writers left in the folder.
func (e env) publish(file string, m *Marker, replace bool, now time.Time) ([]byte, error) {
	ident.ReclaimTemps(filepath.Dir(file))
	m.SessionFile = file
	b := m.encode()
	if replace {
		// The stale marker judged may lie under the other name.
		if err := os.Remove(markerPaths(file)[1]); err != nil && !absent(err) {
			return nil, fmt.Errorf("marker: remove %s: %w", markerPaths(file)[1], err)
		}
	}
	return b, e.write(Path(file), b, replace, now)
}

// write makes the marker encoded as b visible whole at path: written to a
// temp file whose name (e.tempName: short whatever the marker's name, and
// carrying its writer, so that a leftover of a padrun killed mid-publish is
// reclaimed) never matches *.live.json, then linked (no marker
// there) or renamed into place. No fsync: a marker from before a crash is
// stale by its boot id. Its mtime, the first heartbeat, is now: the time of
// the judgement that let it in, on the clock that its later heartbeats use.
func (e env) write(path string, b []byte, replace bool, now time.Time) error {
	tmp := filepath.Join(filepath.Dir(path), e.tempName())
	if err := safefile.WriteNew(tmp, b); err != nil {
		return fmt.Errorf("marker: write %s: %w", tmp, err)
	}
	renamed := false
	defer func() {
		if !renamed {
			os.Remove(tmp) // Best effort: after a link, the temp name is left over.
		}
	}()
	if err := safefile.Touch(tmp, now); err != nil {
		return fmt.Errorf("marker: stamp %s: %w", tmp, err)
	}
	if !replace {
		switch err := os.Link(tmp, path); {
		case err == nil:
			return nil
		case errors.Is(err, os.ErrExist):
			return errChanged // another tool wrote a marker meanwhile: judge it
		}
		// Filesystems without hard links: the lock serialises padruns.
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("marker: publish %s: %w", path, err)
	}
	renamed = true
	return nil
}
