package registry

import (
	"os"

	"github.com/padrun/padrun/marker/ident"
)

// statIdentity is not available here: sockets are judged by mtime, as pad does.
func statIdentity(os.FileInfo) (ino, dev uint64, ok bool) { return 0, 0, false }

// pidLiveness cannot probe a pid here as pad does, so it invents no verdict.
func pidLiveness(int, string) (ident.Verdict, string) {
	return ident.Unknown, "pids cannot be checked on Windows"
}
