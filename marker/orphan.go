package marker

import (
	"path/filepath"

	"github.com/padrun/padrun/marker/cgroupdir"
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
		cgroupdir.RemoveLeftover(stale.Cgroup)
	}
}
