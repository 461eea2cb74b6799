package main

import (
	"runtime"
	"runtime/debug"

	"github.com/padrun/padrun/wrapper"
)

// commit is the source revision, stamped by release builds with
// -ldflags "-X main.commit=..."; else the one Go recorded at build time.
var commit string

// versionLine says padrun's version, commit and Go version in one line.
func versionLine() string {
	c := commit
	if c == "" {
		c = buildRevision()
	}
	return "padrun " + wrapper.Version + " (commit " + c + ", " + runtime.Version() + ", " + runtime.GOOS + "/" + runtime.GOARCH + ")"
}

// buildRevision is the VCS revision go build recorded, or "unknown".
func buildRevision() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "unknown"
	}
	if dirty {
		rev += "-dirty"
	}
	return rev
}
