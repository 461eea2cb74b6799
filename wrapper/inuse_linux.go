package wrapper

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/padrun/padrun/marker/ident"
	"github.com/padrun/padrun/wrapper/watch"
)

// startedAt is when pid started, by the wall clock: its start token
// (clock ticks since boot, USER_HZ = 100 on every Linux) against the
// uptime, both read in this time namespace.
func startedAt(pid int) (time.Time, bool) {
	now := time.Now()
	token, err := ident.StartToken(pid)
	if err != nil {
		return time.Time{}, false
	}
	ticks, err := strconv.ParseInt(token, 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	b, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return time.Time{}, false
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return time.Time{}, false
	}
	up, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return time.Time{}, false
	}
	return now.Add(-time.Duration(up*float64(time.Second)) + time.Duration(ticks)*10*time.Millisecond), true
}

// ofTree reports whether pid, alive, is of root's process tree.
func ofTree(pid, root int) bool { return watch.OfTree(pid, root) }

// inUseNotify tells found, at once, of every file that appears in the
// folders it watches: a harness's in-use lock is learned while its writer
// lives, however soon that writer is killed.
type inUseNotify struct {
	*notifier
	mu   sync.Mutex
	dirs map[int]string
}

// startInUseNotify tells found of every file made in the folders it
// watches; where the kernel's queue overflowed, of every folder, and
// overflow too.
func startInUseNotify(found func(dir string), overflow func()) *inUseNotify {
	base := newNotifier()
	if base == nil {
		return nil // the job's look every second stays
	}
	n := &inUseNotify{notifier: base, dirs: map[int]string{}}
	go n.loop(found, overflow)
	return n
}

// add watches dir; adding it again changes nothing.
func (n *inUseNotify) add(dir string) {
	if n == nil {
		return
	}
	wd, err := unix.InotifyAddWatch(n.in, dir, unix.IN_CREATE|unix.IN_MOVED_TO|unix.IN_ONLYDIR)
	if err != nil {
		return
	}
	n.mu.Lock()
	n.dirs[wd] = dir
	n.mu.Unlock()
}

func (n *inUseNotify) loop(found func(dir string), overflow func()) {
	seen, overflowed := map[string]bool{}, false
	n.run(64<<10, func(ev *unix.InotifyEvent, _ string) {
		n.mu.Lock()
		defer n.mu.Unlock()
		if ev.Mask&unix.IN_Q_OVERFLOW != 0 {
			overflowed = true // what was lost may be in any folder
			for _, dir := range n.dirs {
				seen[dir] = true
			}
		} else if dir, ok := n.dirs[int(ev.Wd)]; ok {
			seen[dir] = true
		}
	}, func() {
		for dir := range seen {
			found(dir)
		}
		if overflowed {
			overflow()
		}
		clear(seen)
		overflowed = false
	})
}

// stop ends the watch. It must not be called while found may wait for
// what its caller holds.
func (n *inUseNotify) stop() {
	if n == nil {
		return
	}
	n.notifier.stop()
}
