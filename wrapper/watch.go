package wrapper

import (
	"path/filepath"
	"strings"

	"github.com/padrun/padrun/wrapper/harness"
)

// watched is a folder being watched for new session files, and how deep
// below its watch root it lies.
type watched struct {
	w     harness.Watch
	dir   string
	level int
}

// matches reports whether a new name in this folder is a session file (at
// the watch's depth) or a folder to watch (above it).
func (d watched) matches(name string, isDir bool) bool {
	if isDir {
		return d.level < d.w.Depth
	}
	if d.level != d.w.Depth || strings.HasSuffix(name, ".live.json") {
		return false
	}
	ok, _ := filepath.Match(d.w.Pattern, name)
	return ok
}
