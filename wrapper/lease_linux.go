package wrapper

import (
	"bufio"
	"errors"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/padrun/padrun/marker"
	"github.com/padrun/padrun/wrapper/harness"
	"github.com/padrun/padrun/wrapper/watch"
)

// leasesWork: Linux has file leases (fcntl(2) F_SETLEASE).
const leasesWork = true

// leases holds a read lease (fcntl(2) F_SETLEASE, F_RDLCK) on every session
// file of the run's watched folders that the run does not hold, so that the
// first open for writing of one of them is seen before it returns: the
// kernel keeps the opener waiting in open(2) and signals padrun (SIGIO),
// and /proc/locks names the opener ("-> LEASE BREAKER"). An opener of the
// run's own tree is claimed for the run there; a refused claim ends the
// child while its open still waits, so not a byte reaches a file another
// session holds. Any other opener (the holder's own harness) is let go at
// once: the lease is given up and taken again once the file is closed.
// This is what guards a switch inside the harness that runs no hook
// (gemini's in-app /resume, which appends at once).
type leases struct {
	s    *session
	dirs []harness.Watch
	in   *os.File // inotify of dirs
	sig  chan os.Signal
	quit chan struct{}
	wg   sync.WaitGroup
	// files are the leased files by path, with the fd that holds the lease
	// (nil while given up); skip are the files not to lease again.
	files map[string]*os.File
	skip  map[string]bool
}

// leaseMask: a new session file, or one closed by its writer (a lease
// given up is taken again then).
const leaseMask = unix.IN_CREATE | unix.IN_MOVED_TO | unix.IN_CLOSE_WRITE | unix.IN_ONLYDIR

// leaseRetry is how often a lease given up is tried again while its file
// is still open for writing (F_SETLEASE fails with EAGAIN).
const leaseRetry = 5 * time.Millisecond

// startLeases leases the session files of ws (folders of a known depth 0)
// for s until stop is called. Call it before the child starts.
func (s *session) startLeases(ws []harness.Watch) (stop func()) {
	l := &leases{s: s, sig: make(chan os.Signal, 8), quit: make(chan struct{}),
		files: map[string]*os.File{}, skip: map[string]bool{}}
	for _, w := range ws {
		if w.Depth == 0 {
			l.dirs = append(l.dirs, w)
		}
	}
	if len(l.dirs) == 0 {
		return func() {}
	}
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		s.o.Log.Warn().Err(err).Msg("cannot watch the session folders for leases")
		return func() {}
	}
	l.in = os.NewFile(uintptr(fd), "inotify")
	for _, w := range l.dirs {
		unix.InotifyAddWatch(fd, w.Dir, leaseMask) // Best effort: a folder not made yet has no file to guard.
	}
	signal.Notify(l.sig, unix.SIGIO)
	l.scan()
	events := make(chan struct{}, 1)
	l.wg.Add(2)
	go func() {
		defer l.wg.Done()
		l.read(events)
	}()
	go func() {
		defer l.wg.Done()
		l.loop(events)
	}()
	return sync.OnceFunc(l.stop)
}

func (l *leases) stop() {
	close(l.quit)
	l.in.SetReadDeadline(time.Unix(1, 0)) // ends read
	l.wg.Wait()
	l.in.Close()
	signal.Stop(l.sig)
	for _, f := range l.files {
		if f != nil {
			f.Close() // the lease goes with it
		}
	}
}

// read turns inotify's events into wake-ups of loop.
func (l *leases) read(events chan<- struct{}) {
	buf := make([]byte, 64<<10)
	for {
		if _, err := l.in.Read(buf); err != nil {
			return
		}
		select {
		case events <- struct{}{}:
		default:
		}
	}
}

func (l *leases) loop(events <-chan struct{}) {
	t := time.NewTimer(leaseRetry)
	defer t.Stop()
	for {
		select {
		case <-l.quit:
			return
		case <-l.sig:
			l.broken()
		case <-events:
			l.scan()
		case <-t.C:
			l.scan()
		}
		if l.givenUp() {
			t.Reset(leaseRetry)
		}
	}
}

// givenUp reports whether a lease waits to be taken again.
func (l *leases) givenUp() bool {
	for _, f := range l.files {
		if f == nil {
			return true
		}
	}
	return false
}

// scan leases every session file of the folders that has none and that
// the run does not hold.
func (l *leases) scan() {
	for _, w := range l.dirs {
		ents, err := os.ReadDir(w.Dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if ok, _ := filepath.Match(w.Pattern, e.Name()); !ok || !e.Type().IsRegular() {
				continue
			}
			p := filepath.Join(w.Dir, e.Name())
			if l.skip[p] || l.files[p] != nil {
				continue
			}
			if file, err := CanonicalFile(p); err != nil || l.s.holds(file) {
				continue
			}
			l.lease(p)
		}
	}
}

// lease takes a read lease on p; a file still open for writing is tried
// again later, one padrun may not lease (another user's, a file system
// without leases) never.
func (l *leases) lease(p string) {
	f, err := os.OpenFile(p, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return
	}
	if _, err = unix.FcntlInt(f.Fd(), unix.F_SETLEASE, unix.F_RDLCK); err != nil {
		f.Close()
		if errors.Is(err, unix.EAGAIN) {
			l.files[p] = nil
			return
		}
		l.skip[p] = true
		l.s.o.Log.Debug().Err(err).Str("file", p).Msg("session file not leased")
		return
	}
	l.files[p] = f
}

// broken answers the leases being broken: /proc/locks lists each of ours
// that is, with the processes waiting in open(2) for it.
func (l *leases) broken() {
	byIno := map[uint64]string{}
	for p, f := range l.files {
		if f == nil {
			continue
		}
		var st unix.Stat_t
		if unix.Fstat(int(f.Fd()), &st) == nil {
			byIno[st.Ino] = p
		}
	}
	for ino, openers := range breakers(os.Getpid()) {
		p, ok := byIno[ino]
		if !ok {
			continue
		}
		ours := false
		for _, pid := range openers {
			ours = ours || watch.OfTree(pid, l.s.self.Pid)
		}
		if ours {
			l.claim(p)
			continue
		}
		// The holder's harness writes its own file: let it, and lease
		// the file again once it is closed.
		l.files[p].Close()
		l.files[p] = nil
	}
}

// claim claims p for the run, whose tree waits to write it; refused, the
// child is ended before its open returns.
func (l *leases) claim(p string) {
	s := l.s
	file, err := CanonicalFile(p)
	if err == nil {
		s.mu.Lock()
		err = s.take(file, "")
		if marker.IsHeld(err) {
			s.o.Log.Error().Str("file", file).Msg("the harness opened a session file another session holds, to write it: stopping it before it writes")
			s.stopHarness(err)
		}
		s.unlock()
	}
	if err != nil {
		if !marker.IsHeld(err) {
			s.o.Log.Warn().Err(err).Str("file", p).Msg("cannot claim the session file the harness opens")
		}
		return // the lease stays until the child is gone
	}
	s.o.Log.Info().Str("file", file).Msg("claimed the session file the harness opened")
	l.files[p].Close()
	delete(l.files, p)
	l.skip[p] = true
}

// breakers reads /proc/locks: for each lease of process pid being broken,
// by inode, the processes waiting to open its file. Lines of one lock share
// its ordinal: "1: LEASE  BREAKING  UNLCK 15629 fe:00:9982302 0 EOF", then
// "1: -> LEASE  BREAKER   WRITE 15648 <none>:0 0 EOF".
func breakers(pid int) map[uint64][]int {
	f, err := os.Open("/proc/locks")
	if err != nil {
		return nil
	}
	defer f.Close()
	out := map[uint64][]int{}
	ours := map[string]uint64{} // ordinal -> inode
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 5 {
			continue
		}
		if fs[1] == "->" {
			if ino, ok := ours[fs[0]]; ok && len(fs) >= 6 && fs[2] == "LEASE" {
				if p, err := strconv.Atoi(fs[5]); err == nil {
					out[ino] = append(out[ino], p)
				}
			}
			continue
		}
		if fs[1] != "LEASE" || fs[2] != "BREAKING" || len(fs) < 6 || fs[4] != strconv.Itoa(pid) {
			continue
		}
		dev := strings.Split(fs[5], ":")
		if ino, err := strconv.ParseUint(dev[len(dev)-1], 10, 64); err == nil {
			ours[fs[0]] = ino
			out[ino] = out[ino][:0:0]
		}
	}
	return out
}
