package wrapper

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// claimsWatched says that the harness's in-use locks can be watched here.
const claimsWatched = true

// claimNotify calls changed, at once, with every session folder under
// state in which a file appears or goes, and watches each new session
// folder as it appears: a lock written into it before its watch was added
// is found by the look that follows the add.
type claimNotify struct {
	*notifier
	state string
	mu    sync.Mutex
	dirs  map[int]string
}

func startClaimNotify(state string, changed func(dir string)) *claimNotify {
	base := newNotifier()
	if base == nil {
		return nil
	}
	n := &claimNotify{notifier: base, state: state, dirs: map[int]string{}}
	os.MkdirAll(state, 0o700) // Best effort: copilot makes it at its first start.
	if !n.add(state, unix.IN_CREATE|unix.IN_MOVED_TO|unix.IN_ONLYDIR) {
		n.close()
		return nil
	}
	n.addSessions(nil)
	go n.loop(changed)
	return n
}

// addSessions watches every session folder under state, and appends the
// ones it had not watched yet to seen.
func (n *claimNotify) addSessions(seen []string) []string {
	des, _ := os.ReadDir(n.state)
	for _, de := range des {
		if d := filepath.Join(n.state, de.Name()); de.IsDir() && !strings.HasPrefix(de.Name(), ".") && n.addSession(d) && !slices.Contains(seen, d) {
			seen = append(seen, d)
		}
	}
	return seen
}

const claimEvents = unix.IN_CREATE | unix.IN_MOVED_TO | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_ONLYDIR

func (n *claimNotify) add(dir string, mask uint32) bool {
	wd, err := unix.InotifyAddWatch(n.in, dir, mask)
	if err != nil {
		return false
	}
	n.mu.Lock()
	n.dirs[wd] = dir
	n.mu.Unlock()
	return true
}

func (n *claimNotify) addSession(dir string) bool { return n.add(dir, claimEvents) }

func (n *claimNotify) loop(changed func(dir string)) {
	var seen []string
	overflowed := false
	n.run(16<<10, func(ev *unix.InotifyEvent, name string) {
		if ev.Mask&unix.IN_Q_OVERFLOW != 0 {
			overflowed = true // what was lost may be in any folder
			return
		}
		n.mu.Lock()
		dir, ok := n.dirs[int(ev.Wd)]
		n.mu.Unlock()
		switch {
		case !ok:
		case dir == n.state:
			if ev.Mask&unix.IN_ISDIR != 0 && !strings.HasPrefix(name, ".") {
				d := filepath.Join(dir, name)
				if n.addSession(d) && !slices.Contains(seen, d) {
					seen = append(seen, d)
				}
			}
		case !slices.Contains(seen, dir):
			seen = append(seen, dir)
		}
	}, func() {
		if overflowed { // docs/spec.md §5, rule 10: every folder looked at again
			seen = n.addSessions(seen)
			n.mu.Lock()
			for _, dir := range n.dirs {
				if dir != n.state && !slices.Contains(seen, dir) {
					seen = append(seen, dir)
				}
			}
			n.mu.Unlock()
		}
		for _, dir := range seen {
			changed(dir)
		}
		seen, overflowed = seen[:0], false
	})
}
