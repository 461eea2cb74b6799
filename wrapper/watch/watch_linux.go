package watch

import (
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/padrun/padrun/marker"
	"github.com/padrun/padrun/wrapper/harness"
)

// watcher follows the watched folders: inotify for new files and writes,
// and, where it may, fanotify for the pid of each writer.
type watcher struct {
	in    int
	fan   *fanWatch    // nil without CAP_SYS_ADMIN
	root  int          // padrun itself: its tree is the run's
	child atomic.Int64 // the direct child
	ev    Events
	dirs  map[int]watched
	// pending are new session files whose writer is not known yet; seen are
	// the writers fanotify named, by file; decided are the files judged.
	pending map[fileKey]string
	seen    map[fileKey]membership
	decided map[fileKey]bool
}

// Start reports, through ev, every session file created in the watched
// folders until stop is called: claimed when the run's own process tree
// writes it, unowned otherwise. It uses inotify, so a file is judged as soon
// as it exists or is first written. Start it before the child, so that no
// file the child creates at once goes unseen; setChild names the child.
func Start(ws []harness.Watch, now time.Time, ev Events) (stop func(), setChild func(int), err error) {
	return watchTree(ws, now, os.Getpid(), ev)
}

// watchTree is Start for the tree of root.
func watchTree(ws []harness.Watch, now time.Time, root int, ev Events) (stop func(), setChild func(int), err error) {
	in, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, nil, err
	}
	w := &watcher{in: in, root: root, ev: ev, dirs: map[int]watched{},
		pending: map[fileKey]string{}, seen: map[fileKey]membership{}, decided: map[fileKey]bool{}}
	if fan, err := newFanWatch(); err == nil {
		w.fan = fan
	}
	for _, ww := range ws {
		w.add(watched{ww, ww.Dir, 0}, now) // only the root is created: date folders are the harness's
	}
	quit := make([]int, 2)
	if err := unix.Pipe2(quit, unix.O_CLOEXEC); err != nil {
		w.close()
		return nil, nil, err
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		w.loop(quit[0])
	}()
	return func() {
		unix.Write(quit[1], []byte{0}) // Best effort: wakes the reader.
		wg.Wait()
		unix.Close(quit[0])
		unix.Close(quit[1])
		w.close()
	}, func(pid int) { w.child.Store(int64(pid)) }, nil
}

func (w *watcher) close() {
	unix.Close(w.in)
	if w.fan != nil {
		w.fan.close()
	}
}

// add watches a folder, and the folder of today below it, which may have
// appeared before the watch.
func (w *watcher) add(d watched, now time.Time) {
	if err := os.MkdirAll(d.dir, 0o700); err != nil {
		return
	}
	wd, err := unix.InotifyAddWatch(w.in, d.dir, unix.IN_CREATE|unix.IN_MOVED_TO|unix.IN_MODIFY|unix.IN_CLOSE_WRITE|unix.IN_ONLYDIR)
	if err != nil {
		return
	}
	w.dirs[wd] = d
	if w.fan != nil && d.level == d.w.Depth {
		w.fan.mark(d.dir) // Best effort: /proc still proves what it can.
	}
	if d.level < d.w.Depth {
		sub := filepath.Join(d.dir, todayPart(now, d.level))
		if fi, err := os.Stat(sub); err == nil && fi.IsDir() {
			w.add(watched{d.w, sub, d.level + 1}, now)
		}
	}
}

// loop reads events until quit is readable, then reads what is left.
func (w *watcher) loop(quit int) {
	buf, fanBuf := make([]byte, 64<<10), make([]byte, 64<<10)
	fds := []unix.PollFd{{Fd: int32(w.in), Events: unix.POLLIN}, {Fd: int32(quit), Events: unix.POLLIN}}
	if w.fan != nil {
		fds = append(fds, unix.PollFd{Fd: int32(w.fan.fd), Events: unix.POLLIN})
	}
	for {
		if _, err := unix.Poll(fds, -1); err != nil && err != unix.EINTR {
			return
		}
		done := fds[1].Revents != 0
		// fanotify first: a write's pid is known before its file is judged.
		if w.fan != nil {
			w.fan.read(fanBuf, w.wrote)
		}
		w.readInotify(buf)
		if done {
			for _, path := range w.pending {
				w.ev.Unowned(path, "no process of this run was seen writing it")
			}
			return
		}
	}
}

func (w *watcher) readInotify(buf []byte) {
	ReadEvents(w.in, buf, func(ev *unix.InotifyEvent, name string) {
		d, ok := w.dirs[int(ev.Wd)]
		isDir := ev.Mask&unix.IN_ISDIR != 0
		if !ok || name == "" || !d.matches(name, isDir) {
			return
		}
		path := filepath.Join(d.dir, name)
		switch {
		case isDir:
			if ev.Mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0 {
				w.add(watched{d.w, path, d.level + 1}, time.Now())
				w.found(watched{d.w, path, d.level + 1})
			}
		case ev.Mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0:
			w.judge(path, true)
		default:
			w.judge(path, false)
			w.ev.Wrote(path)
		}
	})
}

// ReadEvents reads the inotify events queued on fd, each with its file's
// name, until none is left.
func ReadEvents(fd int, buf []byte, each func(ev *unix.InotifyEvent, name string)) {
	for {
		n, err := unix.Read(fd, buf)
		if err != nil || n <= 0 {
			return
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := unix.ByteSliceToString(buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)])
			off += unix.SizeofInotifyEvent + int(ev.Len)
			each(ev, name)
		}
	}
}

// found judges the session files already in a folder that just appeared:
// they may have been created before its watch was added.
func (w *watcher) found(d watched) {
	des, _ := os.ReadDir(d.dir)
	for _, de := range des {
		if d.matches(de.Name(), de.IsDir()) {
			if de.IsDir() {
				w.found(watched{d.w, filepath.Join(d.dir, de.Name()), d.level + 1})
			} else {
				w.judge(filepath.Join(d.dir, de.Name()), true)
			}
		}
	}
}

// judge decides whose a session file is: a new one (created) becomes
// pending until a writer is known; a pending one is judged again on each
// write.
func (w *watcher) judge(path string, created bool) {
	k, ok := keyOf(path)
	if !ok || w.decided[k] {
		return
	}
	if _, isPending := w.pending[k]; !created && !isPending {
		return
	}
	w.pending[k] = path
	m, ok := w.seen[k]
	if !ok {
		switch ours, foreign := writers(k, w.root); {
		case ours && !foreign:
			m = inside
		case foreign && !ours:
			m = outside
		default:
			return // not known yet
		}
	}
	w.decide(k, m)
}

func (w *watcher) decide(k fileKey, m membership) {
	path := w.pending[k]
	delete(w.pending, k)
	delete(w.seen, k)
	w.decided[k] = true
	if m == inside {
		w.ev.Claim(path)
	} else {
		w.ev.Unowned(path, WhyForeign)
	}
}

// wrote records fanotify's writer of a file: the first one decides.
func (w *watcher) wrote(pid int, k fileKey) {
	if w.decided[k] {
		return
	}
	if _, ok := w.seen[k]; ok {
		return
	}
	m := inTree(pid, w.root)
	if m == gone && int64(pid) == w.child.Load() {
		m = inside // the child itself, exited since: nothing else has its pid yet
	}
	if m == gone {
		return // unknown: another write may tell
	}
	w.seen[k] = m
	if _, ok := w.pending[k]; ok {
		w.decide(k, m)
	}
}

// todayPart names the folder at level below a dated watch root: YYYY, MM, DD.
func todayPart(now time.Time, level int) string {
	return [...]string{now.Format("2006"), now.Format("01"), now.Format("02")}[min(level, 2)]
}

// watched is a folder being watched for new session files, and how deep
// below its watch root it lies.
type watched struct {
	w     harness.Watch
	dir   string
	level int
}

// matches reports whether a new name in this folder is a session file (at
// the watch's depth) or a folder to watch (above it).
func (d watched) matches(name string, isDir bool) bool {
	if isDir {
		return d.level < d.w.Depth
	}
	if d.level != d.w.Depth || marker.IsGuardFile(name) {
		return false
	}
	ok, _ := filepath.Match(d.w.Pattern, name)
	return ok
}
