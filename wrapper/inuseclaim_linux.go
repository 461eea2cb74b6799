package wrapper

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/padrun/padrun/wrapper/watch"
)

// claimsWatched says that the harness's in-use locks can be watched here.
const claimsWatched = true

// claimNotify calls changed, at once, with every session folder under
// state in which a file appears or goes, and watches each new session
// folder as it appears: a lock written into it before its watch was added
// is found by the look that follows the add.
type claimNotify struct {
	in, quitR, quitW int
	state            string
	mu               sync.Mutex
	dirs             map[int]string
	done             chan struct{}
}

func startClaimNotify(state string, changed func(dir string)) *claimNotify {
	in, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil
	}
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		unix.Close(in)
		return nil
	}
	n := &claimNotify{in: in, quitR: p[0], quitW: p[1], state: state, dirs: map[int]string{}, done: make(chan struct{})}
	os.MkdirAll(state, 0o700) // Best effort: copilot makes it at its first start.
	if !n.add(state, unix.IN_CREATE|unix.IN_MOVED_TO|unix.IN_ONLYDIR) {
		n.close()
		return nil
	}
	des, _ := os.ReadDir(state)
	for _, de := range des {
		if de.IsDir() && !strings.HasPrefix(de.Name(), ".") {
			n.addSession(filepath.Join(state, de.Name()))
		}
	}
	go n.loop(changed)
	return n
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
	defer close(n.done)
	buf := make([]byte, 16<<10)
	fds := []unix.PollFd{{Fd: int32(n.in), Events: unix.POLLIN}, {Fd: int32(n.quitR), Events: unix.POLLIN}}
	for {
		if _, err := unix.Poll(fds, -1); err != nil && err != unix.EINTR {
			return
		}
		if fds[1].Revents != 0 {
			return
		}
		var seen []string
		watch.ReadEvents(n.in, buf, func(ev *unix.InotifyEvent, name string) {
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
		})
		for _, dir := range seen {
			changed(dir)
		}
	}
}

func (n *claimNotify) close() {
	unix.Close(n.in)
	unix.Close(n.quitR)
	unix.Close(n.quitW)
}

// stop ends the watch. It must not be called while changed may wait for
// what its caller holds.
func (n *claimNotify) stop() {
	unix.Write(n.quitW, []byte{0}) // Best effort: wakes the loop.
	<-n.done
	n.close()
}
