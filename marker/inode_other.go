//go:build !linux

package marker

import "github.com/padrun/padrun/marker/ident"

// fdPath: the current name of an open file is not read here; a moved
// file or folder is not followed.
func fdPath(int) (string, bool) { return "", false }

// fdContents: no path reads an open file's contents here.
func fdContents(int) string { return "" }

// inodeHolder: other processes' locks cannot be read here.
func inodeHolder(string, inodeKey) (*Marker, string, int) { return nil, "", 0 }

func inodeLockHolder(string, ident.Self) *HeldError { return nil }
