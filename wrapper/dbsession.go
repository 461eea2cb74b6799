package wrapper

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/padrun/padrun/wrapper/harness"
)

// sessionFolders readies the folder of every guard that names a session
// of a database (opencode's, docs/spec.md §4.7): padrun's own folder beside the
// database, created 0700, the user's, never reached through a symlink. The
// database's folder is created when the harness has not run yet. Other
// paths are left to the marker, as ever.
func sessionFolders(paths ...string) error {
	for _, p := range paths {
		if !harness.IsSessionGuard(p) {
			continue
		}
		dir := filepath.Dir(p)
		if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
			return fmt.Errorf("wrapper: create %s: %w", filepath.Dir(dir), err)
		}
		if err := ownFolder(dir); err != nil {
			return err
		}
	}
	return nil
}
