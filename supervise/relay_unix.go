//go:build unix

package supervise

import (
	"errors"
	"io"
	"os"
	"sync"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// drainWait bounds the wait for the last output once the child is gone:
// a descendant may keep the terminal or pipes open for good.
const drainWait = 2 * time.Second

// relay carries the child's terminal or pipes to padrun's own, and a copy
// of the output to the record.
type relay struct {
	childFiles []uintptr  // the child's fds 0, 1 and 2
	toClose    []*os.File // the child's ends, closed in padrun once it started
	pty        *os.File   // the pseudo-terminal's master, with --pty
	restore    func()     // puts padrun's terminal back as it was
	rawMode    func()     // puts it in raw mode again after a stop
	outputs    sync.WaitGroup
	closeOnce  sync.Once
}

// lockedWriter serialises writes to the record from several copiers.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// copyOut copies src to dst and, when set, to the record, until src ends.
func (r *relay) copyOut(dst io.Writer, src io.Reader, record io.Writer) {
	r.outputs.Add(1)
	go func() {
		defer r.outputs.Done()
		w := dst
		if record != nil {
			w = io.MultiWriter(dst, record)
		}
		io.Copy(w, src) // Best effort: ends at EOF, or EIO when the terminal closes.
	}()
}

// newPtyRelay opens a pseudo-terminal for the child, sized like ours, and
// puts our terminal, if stdin is one, in raw mode so that every key,
// Ctrl-C included, reaches the child through it.
func newPtyRelay(record io.Writer) (*relay, error) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		return nil, errors.New("supervise: open a pseudo-terminal: " + err.Error())
	}
	r := &relay{pty: ptmx, childFiles: []uintptr{tty.Fd(), tty.Fd(), tty.Fd()}, toClose: []*os.File{tty}}
	r.resize()
	if restore, err := makeRaw(0); err == nil {
		r.restore = restore
		r.rawMode = func() { makeRaw(0) }
	}
	if record != nil {
		record = &lockedWriter{w: record}
	}
	r.copyOut(os.Stdout, ptmx, record)
	go func() {
		io.Copy(ptmx, os.Stdin) // Best effort: ends at EOF or when padrun exits.
		ptmx.Write([]byte{4})   // EOF at the child's terminal: Ctrl-D
	}()
	return r, nil
}

// newPipeRelay gives the child pipes for stdout and stderr, copied to
// padrun's own and to the record.
func newPipeRelay(record io.Writer) (*relay, error) {
	record = &lockedWriter{w: record}
	r := &relay{childFiles: []uintptr{0}}
	for _, dst := range []*os.File{os.Stdout, os.Stderr} {
		pr, pw, err := os.Pipe()
		if err != nil {
			r.close()
			return nil, err
		}
		r.childFiles = append(r.childFiles, pw.Fd())
		r.toClose = append(r.toClose, pw)
		r.copyOut(dst, pr, record)
	}
	return r, nil
}

// started closes padrun's copies of the child's ends, so that output ends
// when the child's do.
func (r *relay) started() {
	for _, f := range r.toClose {
		f.Close()
	}
	r.toClose = nil
}

// resize gives the pseudo-terminal our terminal's size, or 80x24 without one.
func (r *relay) resize() {
	ws, err := pty.GetsizeFull(os.Stdin)
	if err != nil {
		ws = &pty.Winsize{Rows: 24, Cols: 80}
	}
	pty.Setsize(r.pty, ws) // Best effort.
}

func (r *relay) raw() {
	if r.rawMode != nil {
		r.rawMode()
	}
}

// drain waits for the output to end, at most drainWait.
func (r *relay) drain() {
	done := make(chan struct{})
	go func() {
		r.outputs.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(drainWait):
	}
}

func (r *relay) close() {
	r.closeOnce.Do(func() {
		r.started()
		if r.restore != nil {
			r.restore()
		}
		if r.pty != nil {
			r.pty.Close()
		}
	})
}

// makeRaw puts the terminal at fd in raw mode, as cfmakeraw(3) does, and
// returns how to restore it.
func makeRaw(fd int) (restore func(), err error) {
	t, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return nil, err
	}
	old := *t
	t.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	t.Oflag &^= unix.OPOST
	t.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	t.Cflag &^= unix.CSIZE | unix.PARENB
	t.Cflag |= unix.CS8
	t.Cc[unix.VMIN], t.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(fd, ioctlSetTermios, t); err != nil {
		return nil, err
	}
	return func() { unix.IoctlSetTermios(fd, ioctlSetTermios, &old) }, nil
}
