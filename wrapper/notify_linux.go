package wrapper

import (
	"golang.org/x/sys/unix"

	"github.com/padrun/padrun/wrapper/watch"
)

// notifier is an inotify instance read by a goroutine of its own until
// stop: the in-use notify, the claim notify and the picker's watch share it.
type notifier struct {
	in, quitR, quitW int
	done             chan struct{}
}

// newNotifier opens the instance and its quit pipe; nil when the kernel
// gives none (each user has a slower look to fall back on).
func newNotifier() *notifier {
	in, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil
	}
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		unix.Close(in)
		return nil
	}
	return &notifier{in: in, quitR: p[0], quitW: p[1], done: make(chan struct{})}
}

// run reads events into a buffer of size bytes and hands each batch to
// event, then calls batch, until stop; start it on its own goroutine.
func (n *notifier) run(size int, event func(ev *unix.InotifyEvent, name string), batch func()) {
	defer close(n.done)
	buf := make([]byte, size)
	fds := []unix.PollFd{{Fd: int32(n.in), Events: unix.POLLIN}, {Fd: int32(n.quitR), Events: unix.POLLIN}}
	for {
		if _, err := unix.Poll(fds, -1); err != nil && err != unix.EINTR {
			return
		}
		if fds[1].Revents != 0 {
			return
		}
		watch.ReadEvents(n.in, buf, event)
		batch()
	}
}

// close releases the descriptors of a notifier whose loop never started.
func (n *notifier) close() {
	unix.Close(n.in)
	unix.Close(n.quitR)
	unix.Close(n.quitW)
}

// stop ends the loop and closes the instance. It must not be called while
// a callback may wait for what its caller holds.
func (n *notifier) stop() {
	unix.Write(n.quitW, []byte{0}) // Best effort: wakes the loop.
	<-n.done
	n.close()
}
