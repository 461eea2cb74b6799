//go:build unix

package retire

import (
	"os"
	"os/exec"
	"sync"
	"syscall"

	"github.com/padrun/padrun/supervise/reap"
)

// The last close of an inotify instance that held watches waits for
// fsnotify's SRCU grace period: fsnotify_destroy_group flushes the mark
// reaper (fsnotify_wait_marks_destroyed), which runs synchronize_srcu
// before it frees the marks. That is 12-22 ms on a two-core machine, in
// close(2), or in exit_files when padrun exits with the instance open;
// either way before the process padrun ran in can be reaped. So an
// instance whose watch has ended is not closed: it is retired, and at the
// run's end Hand gives every retired instance to a process of padrun's
// own (Name), started with nothing else open, which exits at once. The
// last close is then that process's, which nobody waits for.

// most bounds the instances kept open: past it they are closed at once.
const most = 16

var (
	mu      sync.Mutex
	ending  bool // the run is ending: from here on, instances are retired
	retired []*os.File
)

// Ending says the run is ending: an instance whose watch ends from now on
// is retired; one that ended before, mid-run, was closed at once (its
// close waits in a goroutine of the run, and frees the user's instance:
// max_user_instances is 128).
func Ending() {
	mu.Lock()
	ending = true
	mu.Unlock()
}

// Close retires fd, an inotify instance no goroutine reads any more.
func Close(fd int) { CloseFile(os.NewFile(uintptr(fd), "inotify")) }

// CloseFile is Close for an instance opened as a file.
func CloseFile(f *os.File) {
	mu.Lock()
	defer mu.Unlock()
	if !ending || len(retired) >= most {
		f.Close() // Best effort.
		return
	}
	retired = append(retired, f)
}

// Hand gives the retired instances to a process of padrun's own, which
// holds them until padrun has exited, then exits: its exit, not padrun's,
// is the last close. Best effort: when that process cannot start, they
// are closed here.
func Hand() {
	mu.Lock()
	fs := retired
	retired = nil
	mu.Unlock()
	if len(fs) == 0 {
		return
	}
	if !hand(fs) {
		for _, f := range fs {
			f.Close()
		}
	}
}

func hand(fs []*os.File) bool {
	self, err := os.Executable()
	if err != nil {
		return false
	}
	// padrun keeps the pipe's write end open to its exit (kept: no
	// finalizer closes it); the process reads its end (fd 3) until then.
	r, w, err := os.Pipe()
	if err != nil {
		return false
	}
	defer r.Close()
	// No stdio (a caller reading padrun's output must not wait for it)
	// and a process group of its own (terminal signals are not its).
	cmd := &exec.Cmd{Path: self, Args: []string{Name}, ExtraFiles: append([]*os.File{r}, fs...),
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true}}
	if err := reap.Start(cmd); err != nil { // padrun's own: no orphan of the session
		w.Close()
		return false
	}
	kept = append(kept, w)
	cmd.Process.Release() // not waited for: whoever adopts it reaps it
	return true
}

// kept are the write ends of the pipes Hand's processes read.
var kept []*os.File

// Main is the process Hand starts: it waits for padrun's exit, then
// returns, and its exit destroys the instances.
func Main() int {
	f := os.NewFile(3, "padrun")
	var b [1]byte
	for {
		if _, err := f.Read(b[:]); err != nil {
			return 0
		}
	}
}
