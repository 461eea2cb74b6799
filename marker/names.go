package marker

import (
	"os"
	"path/filepath"
	"strings"
)

// IsGuardFile reports whether path names one of the files that padrun keeps
// beside a session file: a marker, a lock, a break or clear file, or a
// marker's temp file. padrun never writes its output into one.
func IsGuardFile(path string) bool {
	base := filepath.Base(path)
	if strings.HasPrefix(base, ".") && strings.HasSuffix(base, hiddenSuffix) {
		return true
	}
	for _, suffix := range []string{markerSuffix, ".live.lock", ".live.break", ".live.break.clear"} {
		if strings.HasSuffix(base, suffix) {
			return true
		}
	}
	return strings.HasPrefix(base, ".padrun-") && strings.HasSuffix(base, ".tmp")
}

// GuardBeside returns the marker or lock that lies beside file, when one
// does: file is then a session file that a session holds or held. It
// returns "" when there is none.
func GuardBeside(file string) string {
	for _, p := range append(markerPaths(file), lockPath(file)) {
		if _, err := os.Lstat(p); err == nil {
			return p
		}
	}
	return ""
}
