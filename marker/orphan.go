package marker

import (
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/padrun/padrun/marker/ident"
)

// reclaim removes the cgroup that stale, a padrun marker that a taker or
// unlock just replaced or removed, left on this machine: takeover found no
// process in it. Only they do this: a look (Inspect) changes nothing.
func reclaim(stale *Marker, self ident.Self) {
	if stale == nil || stale.Tool != Tool || stale.Cgroup == "" || !filepath.IsAbs(stale.Cgroup) {
		return
	}
	if sameBoot, _ := local(stale, self); sameBoot {
		removeCgroup(stale.Cgroup)
	}
}

// removeCgroup removes an empty cgroup a killed padrun left behind. It
// touches only folders named as padrun names them, on a cgroup v2
// filesystem.
func removeCgroup(dir string) {
	if !strings.HasPrefix(filepath.Base(dir), "padrun-") || !ident.IsCgroup2(dir) {
		return
	}
	// Its last process may be a zombie that init has yet to reap: the
	// kernel still counts it, though it lists no process.
	for try := 0; try < 50; try++ {
		if err := syscall.Rmdir(dir); err != syscall.EBUSY {
			return // Best effort: removed, or a nested one keeps it.
		}
		if pids, err := ident.CgroupProcs(dir); err != nil || len(pids) > 0 {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}
