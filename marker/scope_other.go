//go:build !linux

package marker

import "github.com/padrun/padrun/marker/safefile"

// flockScope: outside Linux padrun cannot yet tell a flock that stays on
// this machine; it trusts the flock, as on a local filesystem.
func flockScope(safefile.Handle) (localOnly bool, fs string) { return false, "" }

func pathScope(string) (localOnly bool, fs string) { return false, "" }
