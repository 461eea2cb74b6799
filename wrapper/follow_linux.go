package wrapper

import (
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// follower watches, with inotify, every folder on the way to a set of
// paths, symlinks followed, for the names on that way: a rename, a new or
// removed entry, a re-pointed symlink. Each change calls check at once,
// which returns the paths to watch from then on.
type follower struct {
	in       int
	quit     [2]int
	wg       sync.WaitGroup
	check    func() []string
	overflow func() // told when the kernel's queue overflowed
	// names are, by watch, the entries on the way that matter; a folder
	// moved or removed itself matters always.
	names map[int]map[string]bool
}

// followMask: entries made, removed, renamed; the folder itself moved or
// removed. A symlink re-pointed is removed and made, or renamed over.
const followMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO |
	unix.IN_MOVE_SELF | unix.IN_DELETE_SELF | unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW

// startFollower follows the paths check returns; overflow is told each
// time the kernel's queue of events overflowed: the check that follows it
// finds what the lost events told of, from the names themselves.
func startFollower(check func() []string, overflow func()) (*follower, error) {
	in, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, err
	}
	f := &follower{in: in, check: check, overflow: overflow, names: map[int]map[string]bool{}}
	if err := unix.Pipe2(f.quit[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		unix.Close(in)
		return nil, err
	}
	// A change before the first watch is found by the first check; one
	// between it and the watch, by the second.
	f.arm(f.check())
	f.arm(f.check())
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		f.loop()
	}()
	return f, nil
}

// wake makes the follower check now, as a change would.
func (f *follower) wake() { unix.Write(f.quit[1], []byte{1}) } // Best effort: a full pipe wakes it already.

// stop ends the watch and waits for a check under way.
func (f *follower) stop() {
	unix.Write(f.quit[1], []byte{0}) // Best effort.
	f.wg.Wait()
	unix.Close(f.in)
	unix.Close(f.quit[0])
	unix.Close(f.quit[1])
}

func (f *follower) loop() {
	buf := make([]byte, 8<<10) // 30 events of the longest names a read; read until none is left
	fds := []unix.PollFd{{Fd: int32(f.in), Events: unix.POLLIN}, {Fd: int32(f.quit[0]), Events: unix.POLLIN}}
	for {
		if _, err := unix.Poll(fds, -1); err != nil && err != unix.EINTR {
			return
		}
		changed := false
		if fds[1].Revents != 0 {
			var b [64]byte
			n, _ := unix.Read(f.quit[0], b[:])
			for _, c := range b[:max(n, 0)] {
				if c == 0 {
					return
				}
			}
			changed = true
		}
		if f.read(buf) {
			changed = true
		}
		if changed {
			f.arm(f.check())
		}
	}
}

// read reads the events there are and reports whether one matters: an
// overflow does, whatever it lost.
func (f *follower) read(buf []byte) bool {
	changed, overflowed := false, false
	defer func() {
		if overflowed {
			f.overflow()
		}
	}()
	for {
		n, err := unix.Read(f.in, buf)
		if err != nil || n <= 0 {
			return changed
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := unix.ByteSliceToString(buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)])
			off += unix.SizeofInotifyEvent + int(ev.Len)
			overflowed = overflowed || ev.Mask&unix.IN_Q_OVERFLOW != 0
			self := ev.Mask&(unix.IN_MOVE_SELF|unix.IN_DELETE_SELF|unix.IN_IGNORED|unix.IN_Q_OVERFLOW) != 0
			if self || f.names[int(ev.Wd)][name] {
				changed = true
			}
		}
	}
}

// arm watches the way to each of paths, and nothing else.
func (f *follower) arm(paths []string) {
	want := map[int]map[string]bool{}
	for _, p := range paths {
		for _, e := range way(p) {
			wd, err := unix.InotifyAddWatch(f.in, e.dir, followMask)
			if err != nil {
				continue
			}
			if want[wd] == nil {
				want[wd] = map[string]bool{}
			}
			want[wd][e.name] = true
		}
	}
	for wd := range f.names {
		if want[wd] == nil {
			unix.InotifyRmWatch(f.in, uint32(wd)) // Best effort: gone with its folder, maybe.
		}
	}
	f.names = want
}

// entry is a name in a folder, on the way to a path.
type entry struct{ dir, name string }

// way lists the entries the kernel looks up to open p (absolute), as
// Resolve walks it (walk): each component in its folder, and, for each
// symlink, the way to its target. It stops at the first entry that does
// not exist, or that cannot be read.
func way(p string) []entry {
	var out []entry
	walk(p, func(dir, name string) { out = append(out, entry{dir, name}) }) // An error only ends the way early.
	return out
}
