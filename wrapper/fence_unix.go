//go:build unix

package wrapper

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/padrun/padrun/supervise/reap"
)

// FenceName is the name padrun runs itself under as a session's fence
// process: not a verb, and no way to change what a run enforces. The fence
// only ends the session's child, when padrun does not renew its lease in
// etcd in time.
const FenceName = "padrun-fence"

// fenceProc is padrun's end of its fence process (docs/spec.md §15): a process of
// its own, outside the child's cgroup and process group, that kills the
// child when the deadline padrun last sent passes, or padrun dies, without
// padrun's process being scheduled (padrun SIGSTOPped, or starved).
// padrun writes "child PID PGID" once, "until T" (T on fenceClock, in
// nanoseconds) after each renewal and "end" when the session is over; the
// fence writes back why it killed.
type fenceProc struct {
	cmd *exec.Cmd
	w   io.WriteCloser
	r   *bufio.Reader
}

// startFence starts the fence of a session whose cgroup is cg ("" for
// none), with the first deadline until and a wake-up every tick.
func startFence(cg string, until int64, tick time.Duration) (*fenceProc, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	if cg == "" {
		cg = "-"
	}
	cmd := &exec.Cmd{Path: self, Args: []string{FenceName, strconv.Itoa(os.Getpid()), cg, tick.String(), strconv.FormatInt(until, 10)}}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // terminal signals are padrun's to forward
	w, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	if err := reap.Start(cmd); err != nil {
		return nil, err
	}
	return &fenceProc{cmd: cmd, w: w, r: bufio.NewReader(out)}, nil
}

// send writes one line to the fence; best effort: a fence gone is said
// at the end.
func (f *fenceProc) send(format string, args ...any) {
	if f != nil {
		fmt.Fprintf(f.w, format+"\n", args...)
	}
}

// end tells the fence the session is over and returns why it killed the
// child, or "".
func (f *fenceProc) end() string {
	if f == nil {
		return ""
	}
	f.send("end")
	f.w.Close()
	b, _ := io.ReadAll(io.LimitReader(f.r, 4096))
	reap.Wait(f.cmd) // its status says nothing its words do not
	why, _ := strings.CutPrefix(strings.TrimSpace(string(b)), "fenced ")
	return why
}

// FenceMain is the fence process: padrun's pid, the session's cgroup (or
// "-"), its tick and first deadline in its arguments, then padrun's lines
// on stdin (fenceProc).
func FenceMain(args []string) int {
	signal.Ignore(syscall.SIGINT, syscall.SIGQUIT, syscall.SIGHUP, syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU, syscall.SIGPIPE)
	if len(args) != 4 {
		fmt.Fprintln(os.Stderr, "padrun: "+FenceName+" is padrun's own: it is not run by hand")
		return 2
	}
	parent, _ := strconv.Atoi(args[0])
	cg := args[1]
	tick, err1 := time.ParseDuration(args[2])
	until, err2 := strconv.ParseInt(args[3], 10, 64)
	if parent <= 0 || err1 != nil || err2 != nil || tick <= 0 {
		fmt.Fprintln(os.Stderr, "padrun: "+FenceName+": bad arguments")
		return 2
	}
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	f := fence{parent: parent, cg: cg, until: until, tick: tick}
	return f.loop(lines)
}

// fence is the fence process's state.
type fence struct {
	parent     int
	cg         string
	pid, pgid  int
	until      int64 // on fenceClock
	tick       time.Duration
	wakeWanted int64 // when the timer was due, on fenceClock
}

func (f *fence) loop(lines <-chan string) int {
	timer := time.NewTimer(f.tick)
	f.wakeWanted = fenceClock() + int64(f.tick)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				f.kill("padrun ended without ending the session (killed?): the fence ended it")
				return 0
			}
			if f.read(l) {
				return 0
			}
		case <-timer.C:
		}
		now := fenceClock()
		if now >= f.until {
			f.kill(f.why(now))
			return 0
		}
		next := min(time.Duration(f.until-now), f.tick)
		timer.Reset(next)
		f.wakeWanted = now + int64(next)
	}
}

// read takes one of padrun's lines, and reports whether the session is over.
func (f *fence) read(l string) bool {
	w := strings.Fields(l)
	switch {
	case len(w) == 1 && w[0] == "end":
		return true
	case len(w) == 3 && w[0] == "child":
		f.pid, _ = strconv.Atoi(w[1])
		f.pgid, _ = strconv.Atoi(w[2])
	case len(w) == 2 && w[0] == "until":
		if t, err := strconv.ParseInt(w[1], 10, 64); err == nil && t > f.until {
			f.until = t
		}
	}
	return false
}

// why says what kept padrun from renewing in time.
func (f *fence) why(now int64) string {
	if late := time.Duration(now - f.wakeWanted); late > f.tick {
		return fmt.Sprintf("the whole session was paused (frozen or suspended: the fence woke %s late, past the lease's deadline): the fence killed the session on the thaw", late.Round(time.Millisecond))
	}
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", f.parent)); err == nil {
		if i := strings.LastIndexByte(string(b), ')'); i > 0 && i+2 < len(b) && (b[i+2] == 'T' || b[i+2] == 't') {
			return "padrun itself was stopped, so it could not renew the lease: the fence ended the session before the lease could expire"
		}
	}
	return "the lease was not renewed in time: the fence ended the session before the lease could expire"
}

// kill ends every process of the session at once, before it says why.
func (f *fence) kill(why string) {
	if f.cg != "-" {
		os.WriteFile(filepath.Join(f.cg, "cgroup.kill"), []byte("1"), 0) // Best effort: the group below too.
	}
	if own, err := unix.Getpgid(f.parent); f.pgid > 0 && (err != nil || f.pgid != own) {
		unix.Kill(-f.pgid, unix.SIGKILL) // Best effort.
	}
	if f.pid > 0 {
		unix.Kill(f.pid, unix.SIGKILL) // Best effort.
	}
	fmt.Println("fenced " + why)
}
