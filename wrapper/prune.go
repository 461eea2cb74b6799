package wrapper

import (
	"time"

	"github.com/padrun/padrun/supervise/cgroup"
)

// PrunedCgroups is what PruneCgroups removed, and what it kept with the
// processes that still live in it.
type PrunedCgroups = cgroup.Pruned

// PruneCgroups removes the empty session cgroups that padruns killed by
// SIGKILL left beside padrun's own, those whose padrun is proven dead at
// now (cgroup.Prune); prune reaches them through it, as a run does.
func PruneCgroups(now time.Time) (PrunedCgroups, error) {
	return cgroup.Prune(now)
}
