package watch

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/padrun/padrun/marker"
	"github.com/padrun/padrun/marker/safefile"
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
	// ws are the watch roots; before are, by folder watched from the
	// start, the entries it had then (name to inode): a rescan judges only
	// what was not there. watching are the folders watched.
	ws       []harness.Watch
	before   map[string]map[string]uint64
	watching map[string]bool
	// afterRescan, when set, runs at the end of each rescan (tests).
	afterRescan func()
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
	w, err := newWatcher(ws, now, root, ev)
	if err != nil {
		return nil, nil, err
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

// newWatcher watches the folders of ws, and notes what they hold now.
func newWatcher(ws []harness.Watch, now time.Time, root int, ev Events) (*watcher, error) {
	in, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, err
	}
	w := &watcher{in: in, root: root, ev: ev, dirs: map[int]watched{},
		pending: map[fileKey]string{}, seen: map[fileKey]membership{}, decided: map[fileKey]bool{},
		ws: ws, before: map[string]map[string]uint64{}, watching: map[string]bool{}}
	if fan, err := newFanWatch(); err == nil {
		w.fan = fan
	}
	for _, ww := range ws {
		w.add(watched{ww, ww.Dir, 0}, now, true) // only the root is created: date folders are the harness's
	}
	return w, nil
}

func (w *watcher) close() {
	unix.Close(w.in)
	if w.fan != nil {
		w.fan.close()
	}
}

// add watches a folder, and the folder of today below it, which may have
// appeared before the watch. At the start (first), what the folder holds
// is noted: a rescan leaves it be.
func (w *watcher) add(d watched, now time.Time, first bool) {
	if err := os.MkdirAll(d.dir, 0o700); err != nil {
		return
	}
	if !w.arm(d) {
		return
	}
	if first {
		had := map[string]uint64{}
		for _, e := range listDir(d.dir, d.matches) {
			had[e.name] = e.ino
		}
		w.before[d.dir] = had
	}
	if d.level < d.w.Depth {
		sub := filepath.Join(d.dir, todayPart(now, d.level))
		if fi, err := os.Stat(sub); err == nil && fi.IsDir() {
			w.add(watched{d.w, sub, d.level + 1}, now, first)
		}
	}
}

// arm watches d; a folder watched already keeps its watch.
func (w *watcher) arm(d watched) bool {
	wd, err := unix.InotifyAddWatch(w.in, d.dir, unix.IN_CREATE|unix.IN_MOVED_TO|unix.IN_MODIFY|unix.IN_CLOSE_WRITE|unix.IN_ONLYDIR)
	if err != nil {
		return false
	}
	if _, ok := w.dirs[wd]; !ok && w.fan != nil && d.level == d.w.Depth {
		w.fan.mark(d.dir) // Best effort: /proc still proves what it can.
	}
	w.dirs[wd] = d
	w.watching[d.dir] = true
	return true
}

// rescan finds what the events of an overflowed queue would have shown:
// the folders made meanwhile, watched from now on, and each session file
// that was not there when the watch began, judged as new (one judged
// already is not judged again). It runs once the overflow event is read:
// whatever a lost event told of had happened by then. A flood that goes on
// meanwhile loses events again only with another overflow event queued,
// which the loop reads next, and so rescans again.
func (w *watcher) rescan() {
	now := time.Now()
	roots := make([]string, 0, len(w.ws))
	for _, ww := range w.ws {
		w.rescanDir(watched{ww, ww.Dir, 0}, now)
		roots = append(roots, ww.Dir)
	}
	if w.afterRescan != nil {
		w.afterRescan()
	}
	if w.ev.Overflow != nil {
		w.ev.Overflow(roots)
	}
}

// rescanDir rescans one folder, and the folders below it that were made
// since the start or are watched.
func (w *watcher) rescanDir(d watched, now time.Time) {
	if !w.arm(d) {
		return // gone: a folder made again is seen by its parent's watch
	}
	had := w.before[d.dir]
	for _, e := range listDir(d.dir, d.matches) {
		path := filepath.Join(d.dir, e.name)
		old := had != nil && had[e.name] == e.ino
		switch {
		case e.isDir && (!old || w.watching[path]):
			w.rescanDir(watched{d.w, path, d.level + 1}, now)
		case !e.isDir && !old:
			w.judge(path, d.w, true)
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

// readInotify reads the events there are; a batch that says the queue
// overflowed is followed by a rescan.
func (w *watcher) readInotify(buf []byte) {
	for {
		overflow := false
		more := readBatch(w.in, buf, func(ev *unix.InotifyEvent, name string) {
			if ev.Mask&unix.IN_Q_OVERFLOW != 0 {
				overflow = true
				return
			}
			w.event(ev, name)
		})
		if overflow {
			w.rescan()
		}
		if !more {
			return
		}
	}
}

// event acts on one inotify event.
func (w *watcher) event(ev *unix.InotifyEvent, name string) {
	d, ok := w.dirs[int(ev.Wd)]
	isDir := ev.Mask&unix.IN_ISDIR != 0
	if !ok || name == "" {
		return
	}
	if session := d.sessionOf(name, isDir); session != "" {
		w.judge(filepath.Join(d.dir, session), d.w, false) // its writer's record may prove it now
		return
	}
	if !d.matches(name, isDir) {
		return
	}
	path := filepath.Join(d.dir, name)
	switch {
	case isDir:
		if ev.Mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0 {
			w.add(watched{d.w, path, d.level + 1}, time.Now(), false)
			w.found(watched{d.w, path, d.level + 1})
		}
	case ev.Mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0:
		w.judge(path, d.w, true)
	default:
		w.judge(path, d.w, false)
		w.ev.Wrote(path)
	}
}

// ReadEvents reads the inotify events queued on fd, each with its file's
// name, until none is left. An overflowed queue is told as an event with
// IN_Q_OVERFLOW set, of no watch (Wd -1).
func ReadEvents(fd int, buf []byte, each func(ev *unix.InotifyEvent, name string)) {
	for readBatch(fd, buf, each) {
	}
}

// readBatch reads what one read of fd returns, and reports whether there
// may be more.
func readBatch(fd int, buf []byte, each func(ev *unix.InotifyEvent, name string)) bool {
	n, err := unix.Read(fd, buf)
	if err != nil || n <= 0 {
		return false
	}
	for off := 0; off+unix.SizeofInotifyEvent <= n; {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
		name := unix.ByteSliceToString(buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)])
		off += unix.SizeofInotifyEvent + int(ev.Len)
		each(ev, name)
	}
	return true
}

// entry is a folder's entry as getdents(2) gives it.
type entry struct {
	name  string
	ino   uint64
	isDir bool
}

// listDir lists the entries of dir that keep keeps, with each one's
// inode, without a stat of each (where the file system gives no entry
// types, a folder's are looked up). keep must not retain the name.
func listDir(dir string, keep func(name string, isDir bool) bool) []entry {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer unix.Close(fd)
	var out []entry
	buf := make([]byte, 8<<10)
	for {
		n, err := unix.ReadDirent(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return out
		}
		out = parseDirents(dir, buf[:n], keep, out)
	}
}

// parseDirents appends the linux_dirent64 records of b that keep keeps
// to out.
func parseDirents(dir string, b []byte, keep func(name string, isDir bool) bool, out []entry) []entry {
	const nameAt = 19 // ino 8, off 8, reclen 2, type 1
	for len(b) >= nameAt {
		reclen := int(binary.NativeEndian.Uint16(b[16:]))
		if reclen < nameAt || reclen > len(b) {
			return out
		}
		raw := b[nameAt:reclen]
		if i := bytes.IndexByte(raw, 0); i >= 0 {
			raw = raw[:i]
		}
		ino, typ := binary.NativeEndian.Uint64(b), b[18]
		b = b[reclen:]
		name := unsafe.String(unsafe.SliceData(raw), len(raw)) // no copy until it is kept
		if ino == 0 || name == "." || name == ".." || name == "" {
			continue
		}
		isDir := typ == unix.DT_DIR
		if typ == unix.DT_UNKNOWN {
			var st unix.Stat_t
			isDir = unix.Lstat(filepath.Join(dir, name), &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR
		}
		if keep(name, isDir) {
			out = append(out, entry{name: strings.Clone(name), ino: ino, isDir: isDir})
		}
	}
	return out
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
				w.judge(filepath.Join(d.dir, de.Name()), d.w, true)
			}
		}
	}
}

// judge decides whose a session file of ww is: a new one (created)
// becomes pending until a writer is known; a pending one is judged again
// on each write, to it or to its writer's record.
func (w *watcher) judge(path string, ww harness.Watch, created bool) {
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
		case !ours && !foreign: // no writer seen: its record may name it
			m = w.recorded(path, ww)
		}
	}
	if m == gone {
		return // not known yet
	}
	w.decide(k, m)
}

// recordMax bounds a writer's record that padrun reads: cline's holds the
// first prompt.
const recordMax = 4 << 20

// recorded judges a session file by its harness's record of its writer
// (harness.Watch.Record), which only that user or root may have written:
// gone when there is no such record, or its writer is gone.
func (w *watcher) recorded(path string, ww harness.Watch) membership {
	name := ww.RecordOf(filepath.Base(path))
	if name == "" {
		return gone
	}
	b, err := safefile.ReadTrusted(filepath.Join(filepath.Dir(path), name), recordMax)
	if err != nil {
		return gone
	}
	var r struct {
		Pid int `json:"pid"`
	}
	if json.Unmarshal(b, &r) != nil || r.Pid <= 0 {
		return gone
	}
	return w.member(r.Pid)
}

// member is inTree for the run's root, where the child itself, exited
// since, is still inside: nothing else has its pid yet.
func (w *watcher) member(pid int) membership {
	m := inTree(pid, w.root)
	if m == gone && int64(pid) == w.child.Load() {
		m = inside
	}
	return m
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
	m := w.member(pid)
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

// sessionOf is the name of the session file of which name, in this
// folder, is the writer's record (harness.Watch.Record); "" when it is
// none.
func (d watched) sessionOf(name string, isDir bool) string {
	if isDir || d.level != d.w.Depth || marker.IsGuardFile(name) {
		return ""
	}
	return d.w.SessionOf(name)
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
