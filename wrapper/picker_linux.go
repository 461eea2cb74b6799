package wrapper

import (
	"os"

	"golang.org/x/sys/unix"

	"github.com/padrun/padrun/wrapper/watch"
)

// pickNotify reports, at once, every open of the folder signal and every
// read of a file in dir (inotify's IN_OPEN and IN_ACCESS, which name no
// process).
type pickNotify struct {
	in, quitR, quitW int
	signal, dir      int
	done             chan struct{}
}

func startPickNotify(signal, dir string, signalled func(), read func(name string)) *pickNotify {
	in, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil
	}
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		unix.Close(in)
		return nil
	}
	n := &pickNotify{in: in, quitR: p[0], quitW: p[1], done: make(chan struct{})}
	os.MkdirAll(signal, 0o700) // Best effort: claude makes it at its start.
	n.signal, err = unix.InotifyAddWatch(in, signal, unix.IN_OPEN|unix.IN_ONLYDIR)
	if err == nil {
		n.dir, err = unix.InotifyAddWatch(in, dir, unix.IN_ACCESS|unix.IN_ONLYDIR)
	}
	if err != nil {
		n.close()
		return nil
	}
	go n.loop(signalled, read)
	return n
}

func (n *pickNotify) loop(signalled func(), read func(name string)) {
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
		watch.ReadEvents(n.in, buf, func(ev *unix.InotifyEvent, name string) {
			switch {
			case int(ev.Wd) == n.signal && name == "":
				signalled() // the folder itself was opened
			case int(ev.Wd) == n.dir && name != "":
				read(name)
			}
		})
	}
}

func (n *pickNotify) close() {
	unix.Close(n.in)
	unix.Close(n.quitR)
	unix.Close(n.quitW)
}

// stop ends the watch. It must not be called while a callback may wait for
// what its caller holds.
func (n *pickNotify) stop() {
	unix.Write(n.quitW, []byte{0}) // Best effort: wakes the loop.
	<-n.done
	n.close()
}
