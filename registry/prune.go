package registry

import (
	"context"
	"fmt"
	"time"

	"github.com/padrun/padrun/marker/ident"
)

// PruneResult is what Prune did, in the shape of pad's prune report.
type PruneResult struct {
	Removed []Entry `json:"removed"`
	Dead    int     `json:"dead_removed"`
	Unknown int     `json:"unknown_removed"`
	Kept    int     `json:"kept"`
}

// Prune deletes, under the folder lock, the records whose owner is dead, and
// unknown ones (malformed files included, by their mtime) older than
// olderThan when it is positive; never an alive one, and never a file that
// is not a record, but the temp files of dead writers (ident.ReclaimTemps). Each is read and judged again just before it goes.
func (r *Registry) Prune(ctx context.Context, olderThan time.Duration, now time.Time) (PruneResult, error) {
	res := PruneResult{Removed: []Entry{}}
	err := r.locked(ctx, LockWait, func() error {
		ident.ReclaimTemps(r.Dir) // left by writers killed before their rename
		entries, err := r.List()
		if err != nil {
			return err
		}
		for _, e := range entries {
			if !prunable(e, olderThan, now) {
				res.Kept++
				continue
			}
			if beforeRecheck != nil {
				beforeRecheck(e.Path)
			}
			fresh, ok := load(e.Path) // the verdict that counts is the one just before deleting
			if !ok {
				continue // gone meanwhile, or no longer a record
			}
			if !prunable(fresh, olderThan, now) {
				res.Kept++
				continue
			}
			removed, err := removeSame(fresh.Path, fresh.info)
			if err != nil {
				return fmt.Errorf("registry: remove %s: %w", fresh.Path, err)
			}
			if !removed {
				continue // replaced or gone since it was judged
			}
			res.Removed = append(res.Removed, fresh)
			if fresh.Liveness == ident.Dead {
				res.Dead++
			} else {
				res.Unknown++
			}
		}
		return nil
	})
	return res, err
}

// beforeRecheck, set by tests only, runs between a record's first verdict
// and the one that decides.
var beforeRecheck func(path string)

// prunable: dead always; unknown only when older than a positive bound.
func prunable(e Entry, olderThan time.Duration, now time.Time) bool {
	switch e.Liveness {
	case ident.Dead:
		return true
	case ident.Unknown:
		return olderThan > 0 && !e.Time.IsZero() && now.Sub(e.Time) > olderThan
	}
	return false
}
