//go:build unix

package supervise

import (
	"bytes"
	"errors"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// drainWait bounds the wait for the last output once the child is gone:
// a descendant may keep the terminal or pipes open for good.
const drainWait = 2 * time.Second

// relay carries the child's terminal or pipes to padrun's own, and a copy
// of the output to the transcript.
type relay struct {
	childFiles []uintptr    // the child's fds 0, 1 and 2
	toClose    []*os.File   // the child's ends, closed in padrun once it started
	pty        *os.File     // the pseudo-terminal's master, with --pty
	childPid   atomic.Int64 // set once the child started
	restore    func()       // puts padrun's terminal back as it was
	rawMode    func()       // puts it in raw mode again after a stop
	outputs    sync.WaitGroup
	closeOnce  sync.Once
}

// lockedWriter serialises writes to the transcript from several copiers.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// copyOut copies src to dst and, when set, to the transcript, until src ends.
func (r *relay) copyOut(dst io.Writer, src io.Reader, transcript io.Writer) {
	r.outputs.Add(1)
	go func() {
		defer r.outputs.Done()
		w := dst
		if transcript != nil {
			w = io.MultiWriter(dst, transcript)
		}
		io.Copy(w, src) // Best effort: ends at EOF, or EIO when the terminal closes.
	}()
}

// newPtyRelay opens a pseudo-terminal for the child, sized like ours, and
// puts our terminal, if stdin is one, in raw mode so that every key,
// Ctrl-C included, reaches the child through it.
func newPtyRelay(transcript io.Writer) (*relay, error) {
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
	if transcript != nil {
		transcript = &lockedWriter{w: transcript}
	}
	r.copyOut(os.Stdout, ptmx, transcript)
	go r.copyIn()
	return r, nil
}

// copyIn passes our terminal's keys to the child's, until stdin ends; then
// it types Ctrl-D there. The child leads a session of its own, where the
// kernel discards the terminal's stop signal (an orphaned process group), so
// the suspend key is acted on here: the child is stopped, and padrun with it.
func (r *relay) copyIn() {
	buf := make([]byte, 32<<10)
	for {
		n, err := os.Stdin.Read(buf)
		b := buf[:n]
		for len(b) > 0 {
			i := r.suspendKey(b)
			if i < 0 {
				r.pty.Write(b) // Best effort: the child may be gone.
				break
			}
			r.pty.Write(b[:i])
			if pid := int(r.childPid.Load()); pid > 0 {
				unix.Kill(-pid, unix.SIGTSTP) // Best effort.
				unix.Kill(-pid, unix.SIGSTOP) // Best effort: TSTP alone is discarded there.
			}
			b = b[i+1:]
		}
		if err != nil {
			r.pty.Write([]byte{4}) // Best effort.
			return
		}
	}
}

// suspendKey returns where the child's terminal's suspend key is in b, or
// -1: it is a key only while that terminal generates signals.
func (r *relay) suspendKey(b []byte) int {
	t, err := unix.IoctlGetTermios(int(r.pty.Fd()), ioctlGetTermios)
	if err != nil || t.Lflag&unix.ISIG == 0 || t.Cc[unix.VSUSP] == 0 {
		return -1
	}
	return bytes.IndexByte(b, t.Cc[unix.VSUSP])
}

// newPipeRelay gives the child pipes for stdout and stderr, copied to
// padrun's own and to the transcript.
func newPipeRelay(transcript io.Writer) (*relay, error) {
	transcript = &lockedWriter{w: transcript}
	r := &relay{childFiles: []uintptr{0}}
	for _, dst := range []*os.File{os.Stdout, os.Stderr} {
		pr, pw, err := os.Pipe()
		if err != nil {
			r.close()
			return nil, err
		}
		r.childFiles = append(r.childFiles, pw.Fd())
		r.toClose = append(r.toClose, pw)
		r.copyOut(dst, pr, transcript)
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

// suspend gives the terminal back as it was and stops padrun, so that the
// shell sees the job stopped when the child on its own terminal stopped.
func (r *relay) suspend() {
	if r.restore == nil {
		return // no terminal of ours: nobody to hand it back to
	}
	r.restore()
	unix.Kill(unix.Getpid(), unix.SIGTSTP) // Best effort.
}

// resume puts the terminal in raw mode again after a stop, and passes on
// its size, which may have changed meanwhile.
func (r *relay) resume() {
	if r.rawMode != nil {
		r.rawMode()
	}
	r.resize()
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
