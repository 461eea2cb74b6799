package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/padrun/padrun/wrapper"
	"github.com/padrun/padrun/wrapper/harness"
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

// versionText is `padrun version`'s: the version line, then the harness
// releases padrun is tested with, the oldest supported and the newest.
func versionText() string {
	var b strings.Builder
	b.WriteString(versionLine() + "\ntested with (oldest supported to newest):\n")
	for _, tv := range harness.TestedVersions() {
		if tv.Oldest == tv.Newest {
			fmt.Fprintf(&b, "  %-8s %s\n", tv.Harness, tv.Newest)
			continue
		}
		fmt.Fprintf(&b, "  %-8s %s to %s\n", tv.Harness, tv.Oldest, tv.Newest)
	}
	return b.String()
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
