package wrapper

import (
	"os"

	"golang.org/x/sys/unix"
)

// pickNotify reports, at once, every open of the folder signal and every
// read of a file in dir (inotify's IN_OPEN and IN_ACCESS, which name no
// process).
type pickNotify struct {
	*notifier
	signal, dir int
}

func startPickNotify(signal, dir string, signalled func(), read func(name string)) *pickNotify {
	base := newNotifier()
	if base == nil {
		return nil
	}
	n := &pickNotify{notifier: base}
	os.MkdirAll(signal, 0o700) // Best effort: claude makes it at its start.
	var err error
	n.signal, err = unix.InotifyAddWatch(n.in, signal, unix.IN_OPEN|unix.IN_ONLYDIR)
	if err == nil {
		n.dir, err = unix.InotifyAddWatch(n.in, dir, unix.IN_ACCESS|unix.IN_ONLYDIR)
	}
	if err != nil {
		n.close()
		return nil
	}
	go n.loop(signalled, read)
	return n
}

func (n *pickNotify) loop(signalled func(), read func(name string)) {
	n.run(16<<10, func(ev *unix.InotifyEvent, name string) {
		switch {
		case int(ev.Wd) == n.signal && name == "":
			signalled() // the folder itself was opened
		case int(ev.Wd) == n.dir && name != "":
			read(name)
		}
	}, func() {})
}
