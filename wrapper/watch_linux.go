package wrapper

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/padrun/padrun/wrapper/harness"
)

// watch reports, through claim, every session file created in the watched
// folders until stop is called. It uses inotify, so a file is claimed as
// soon as it exists.
func watch(ws []harness.Watch, now time.Time, claim func(path string)) (stop func(), err error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, err
	}
	dirs := map[int]watched{}
	var add func(d watched)
	add = func(d watched) {
		if err := os.MkdirAll(d.dir, 0o700); err != nil {
			return
		}
		wd, err := unix.InotifyAddWatch(fd, d.dir, unix.IN_CREATE|unix.IN_MOVED_TO|unix.IN_ONLYDIR)
		if err != nil {
			return
		}
		dirs[wd] = d
		// Whatever appeared before the watch: today's folders, new files.
		if d.level < d.w.Depth {
			sub := filepath.Join(d.dir, todayPart(now, d.level))
			if fi, err := os.Stat(sub); err == nil && fi.IsDir() {
				add(watched{d.w, sub, d.level + 1})
			}
		}
	}
	for _, w := range ws {
		add(watched{w, w.Dir, 0}) // only the root is created: date folders are the harness's
	}
	quit := make([]int, 2)
	if err := unix.Pipe2(quit, unix.O_CLOEXEC); err != nil {
		unix.Close(fd)
		return nil, err
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		buf := make([]byte, 64<<10)
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}, {Fd: int32(quit[0]), Events: unix.POLLIN}}
		for {
			if _, err := unix.Poll(fds, -1); err != nil && err != unix.EINTR {
				return
			}
			if fds[1].Revents != 0 {
				return
			}
			n, err := unix.Read(fd, buf)
			if err != nil {
				continue
			}
			for off := 0; off+unix.SizeofInotifyEvent <= n; {
				ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
				nameBytes := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
				off += unix.SizeofInotifyEvent + int(ev.Len)
				d, ok := dirs[int(ev.Wd)]
				name := unix.ByteSliceToString(nameBytes)
				if !ok || name == "" {
					continue
				}
				isDir := ev.Mask&unix.IN_ISDIR != 0
				if !d.matches(name, isDir) {
					continue
				}
				path := filepath.Join(d.dir, name)
				if isDir {
					add(watched{d.w, path, d.level + 1})
					claimAll(watched{d.w, path, d.level + 1}, claim)
					continue
				}
				claim(path)
			}
		}
	}()
	return func() {
		unix.Write(quit[1], []byte{0}) // Best effort: wakes the reader.
		wg.Wait()
		unix.Close(quit[0])
		unix.Close(quit[1])
		unix.Close(fd)
	}, nil
}

// claimAll claims the session files already in a folder that just
// appeared: they may have been created before its watch was added.
func claimAll(d watched, claim func(string)) {
	des, _ := os.ReadDir(d.dir)
	for _, de := range des {
		if d.matches(de.Name(), de.IsDir()) {
			if de.IsDir() {
				claimAll(watched{d.w, filepath.Join(d.dir, de.Name()), d.level + 1}, claim)
			} else {
				claim(filepath.Join(d.dir, de.Name()))
			}
		}
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
	if d.level != d.w.Depth || strings.HasSuffix(name, ".live.json") {
		return false
	}
	ok, _ := filepath.Match(d.w.Pattern, name)
	return ok
}
