//go:build !linux

package watch

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/padrun/padrun/marker"
	"github.com/padrun/padrun/wrapper/harness"
)

// Start reports, through ev, every session file created in the watched
// folders until stop is called, by a cheap poll of their listings. Here
// padrun cannot tell which process writes a file: none is claimed.
func Start(ws []harness.Watch, _ time.Time, ev Events) (stop func(), setChild func(int), err error) {
	list := func() map[string]bool {
		seen := map[string]bool{}
		for _, w := range ws {
			pattern := filepath.Join(append([]string{w.Dir}, append(strings.Split(strings.Repeat("*", w.Depth), ""), w.Pattern)...)...)
			paths, _ := filepath.Glob(pattern)
			for _, p := range paths {
				if !marker.IsGuardFile(p) {
					seen[p] = true
				}
			}
		}
		return seen
	}
	for _, w := range ws {
		os.MkdirAll(w.Dir, 0o700) // Best effort.
	}
	before := list()
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				for p := range list() {
					if !before[p] {
						before[p] = true
						ev.Unowned(p, "padrun cannot tell which process writes it on this system")
					}
				}
			}
		}
	}()
	return func() { close(quit); <-done }, func(int) {}, nil
}

// TreeOpens is Linux's look into /proc; elsewhere the tree is taken to
// hold path open, so that nothing waits for it.
func TreeOpens(string, int) bool { return true }
