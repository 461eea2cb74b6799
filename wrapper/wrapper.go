// Package wrapper is the guarded run: it resolves the session identity and
// the files to guard, acquires them, registers the session, starts and
// supervises the child, and cleans up on every exit path.
package wrapper

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/padrun/padrun/marker"
	"github.com/padrun/padrun/marker/ident"
	"github.com/padrun/padrun/marker/safefile"
	"github.com/padrun/padrun/registry"
	"github.com/padrun/padrun/supervise"
	"github.com/padrun/padrun/wrapper/harness"
)

// Version is padrun's version, recorded in markers and records. Release
// builds stamp it with -ldflags "-X github.com/padrun/padrun/wrapper.Version=...".
var Version = "0.1.0"

// DefaultHeartbeat is the heartbeat's interval unless --heartbeat says
// otherwise: other machines take a crashed holder's file over after 3 of
// them (45 s), and a reader's attribute cache may lag it by up to 2 (sshfs
// caches attributes for 20 s by default). It costs padrun one utimensat
// and one timer wake per interval, about 50 ms of CPU an hour (measured by
// BenchmarkHeartbeat).
const DefaultHeartbeat = 15 * time.Second

// Options are the run's settings, from the command line.
type Options struct {
	Guards    []string
	Harness   string
	Agent     string
	Wait      time.Duration
	Timeout   time.Duration
	Grace     time.Duration
	Heartbeat time.Duration // 0 is off
	Strict    bool
	NoPin     bool
	Pty       bool     // run the child on a new pseudo-terminal
	Record    string   // write the session's output to this file too
	Command   []string // COMMAND [ARG...]
	Log       zerolog.Logger
	Stderr    io.Writer // where people read waiting notices

	// NoCompanion leaves the harness without its companion: switches
	// inside it are unguarded.
	NoCompanion bool
}

// UsageError is a run that cannot start as asked (exit 125).
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// AbortError says a signal arrived before the child started: the run was
// abandoned and padrun should die by that signal.
type AbortError struct{ Signal syscall.Signal }

func (e *AbortError) Error() string { return "wrapper: aborted by " + e.Signal.String() }

// session is one run's state, for cleanup.
type session struct {
	o     Options
	self  ident.Self
	proto marker.Marker // the marker published for each file, but its nonce
	reg   *registry.Registry
	// parent is the outer session's pid (PAD_SESSION_PID), or 0.
	parent int

	// registered closes once the abort signals are registered: before a
	// wait, so that a signal sent to a waiting padrun aborts it.
	registered <-chan struct{}

	mu    sync.Mutex // guards what claims of new session files change
	locks []*marker.Lock
	rec   *registry.Record
	tree  *supervise.Tree // the session's cgroup, where padrun could make one
	child childInfo       // what the markers record of the child
	left  []int           // processes of the session that outlived padrun's end of it

	warnedFS bool // the warning of a lock that other machines cannot see is given once

	// For companions that cannot cancel (claude): the harness's current
	// session file, the --guard files never released for it, how to end the
	// child, and why it was ended.
	current string
	guards  []string
	kill    func()
	stopped error
}

// Run runs the command as a guarded, supervised child and returns how it
// ended. Call it from the goroutine locked to the main thread: the child is
// killed when the thread that forked it exits.
func Run(o Options) (st supervise.Status, err error) {
	parent, err := parentSession()
	if err != nil {
		return st, err
	}
	// Registering a signal costs a round trip to the runtime's signal
	// thread: do it beside the work up to the fork. The handlers stay
	// installed after Run returns: padrun exits right after, and a signal
	// that arrives during cleanup must not cut it short.
	sigs := make(chan os.Signal, 16)
	supervise.KeepIgnored()
	registered := notify(sigs, supervise.Abort)
	go warmJSON()

	s := &session{o: o, self: ident.ReadSelf(), parent: parent, registered: registered}
	cwd, err := CanonicalDir(".")
	if err != nil {
		return st, err
	}
	home, _ := os.UserHomeDir() // Best effort: adapters fall back to none.
	plan, err := harness.Resolve(o.Harness, o.Command, harness.Env{
		Getenv: os.Getenv, Cwd: cwd, Home: home, NoPin: o.NoPin, StdinTTY: supervise.IsTerminal(os.Stdin.Fd()),
	})
	if err != nil {
		return st, &UsageError{err.Error()}
	}
	files, err := guardedFiles(o.Guards, plan.Files)
	if err != nil {
		return st, &UsageError{err.Error()}
	}
	if err := unguarded(o, plan, files); err != nil {
		return st, err
	}
	if err := checkNames(files, o.Strict, func(msg string) { o.Log.Warn().Msg(msg) }); err != nil {
		return st, err
	}
	if plan.Unknown != "" {
		if o.Strict {
			return st, &UsageError{"cannot name the session file before " + plan.Harness + " runs (" + plan.Unknown + ") and --strict is set"}
		}
		o.Log.Warn().Str("harness", plan.Harness).Msg("session file unknown before " + plan.Harness + " runs (" + plan.Unknown + "): running with the registry record only")
	}
	// Only argv[0] is logged: the rest may hold a prompt, which is private.
	o.Log.Debug().Str("command", filepath.Base(plan.Argv[0])).Str("harness", plan.Harness).
		Str("mode", plan.Mode).Strs("files", files).Msg("run")
	s.guards, _ = guardedFiles(o.Guards, nil) // Best effort: the same paths were resolved above.
	if len(plan.Files) > 0 {
		s.current, _ = CanonicalFile(plan.Files[0])
	}
	ctlDir, err := s.setupCompanion(&plan)
	if err != nil {
		return st, err
	}
	path, err := supervise.LookPath(plan.Argv[0], os.Getenv("PATH"))
	if err != nil {
		return st, err
	}
	agent := resolveAgent(o.Agent, cwd, plan.Harness)

	reg, err := openRegistry()
	if err != nil {
		return st, err
	}
	reg.OnWait = func(holder string) {
		o.Log.Warn().Str("holder", holder).Msg("waiting for the registry's lock (at most " + registry.LockWait.String() + ")")
	}
	defer s.cleanup()
	now := time.Now()
	proto := marker.New(s.self, "", "", now)
	proto.Version, proto.Harness, proto.Mode, proto.Agent = Version, plan.Harness, plan.Mode, agent
	proto.SessionID = plan.SessionID
	proto.HeartbeatSeconds = heartbeatSeconds(o.Heartbeat)
	s.tree = supervise.NewTree(fmt.Sprintf("%d-%s", s.self.Pid, s.self.StartToken))
	if s.tree != nil {
		proto.Cgroup = s.tree.Path
	}
	s.proto = proto
	if err := s.acquire(files, proto, sigs); err != nil {
		return st, err
	}
	s.tree.Make() // named by the markers now: a padrun killed from here on leaves none unnamed
	// The record may be another session's: touch it only once this run
	// holds every file, so a refused run changes nothing.
	var record io.Writer
	if o.Record != "" {
		f, err := openRecord(o.Record)
		if err != nil {
			return st, err
		}
		defer f.Close()
		record = f
	}
	s.reg = reg
	s.rec = &registry.Record{
		SessionPID: s.self.Pid, SessionPIDSource: "self", SessionPIDVerified: true,
		ProcStart: ident.Token(s.self.StartToken), SessionID: plan.SessionID, Agent: agent,
		Pid: s.self.Pid, Cwd: cwd, RegisteredAt: now.UTC().Format(time.RFC3339Nano),
		Padrun: &registry.Padrun{
			Version: Version, Harness: plan.Harness, Mode: plan.Mode,
			SessionFiles: files, Markers: markers(files),
			ParentSessionPid: parent, Command: filepath.Base(plan.Argv[0]),
		},
	}
	ctx, stop := signalContext()
	err = reg.Write(ctx, s.rec)
	stop()
	if err != nil {
		s.rec = nil
		var sig *interrupted
		if errors.As(err, &sig) {
			return st, &AbortError{sig.sig}
		}
		return st, err
	}
	env := childEnv(os.Environ(), s.self.Pid, agent, files)
	if ctlDir != "" {
		ctl, err := startControl(ctlDir, s.self.Pid, s.handleControl)
		if err != nil {
			return st, err
		}
		defer ctl.stop() // before cleanup: no claim comes in while it runs
		env = append(env, "PADRUN_CONTROL="+ctl.path)
	}
	<-registered
	select {
	case sig := <-sigs:
		return st, &AbortError{sig.(syscall.Signal)}
	default:
	}
	// The watch starts before the child: a file it creates at once is seen.
	stopWatch, watchChild := s.watch(plan.Watch, now)
	defer stopWatch()
	child, err := supervise.Start(supervise.Spec{
		Path: path, Args: plan.Argv, Env: env,
		Pty: o.Pty, Record: record, Tree: s.tree, Inherit: s.lockFds(),
	})
	if err != nil {
		return st, err
	}
	defer remindUnknown(o, plan)() // last, once the terminal is restored
	defer child.Close()            // the terminal is restored on every path, before cleanup
	s.mu.Lock()
	s.kill = child.Kill
	stopped := s.stopped
	s.mu.Unlock()
	if stopped != nil {
		child.Kill() // a claim was refused before the child was known
	}
	notify(sigs, supervise.Late)
	o.Log.Debug().Int("child_pid", child.Pid).Msg("started")
	stopRecord := s.recordChild(childInfo{pid: child.Pid, pgid: child.Pgid, sid: child.Sid, inCgroup: child.Cgroup != ""})
	stopHeartbeat := s.heartbeat(o.Heartbeat)
	watchChild(child.Pid)
	st = child.Supervise(sigs, o.Grace, o.Timeout)
	o.Log.Debug().Int("code", st.Code).Str("signal", signalName(st.Signal)).Bool("timed_out", st.TimedOut).Msg("child ended")
	s.endRest(child)
	stopWatch()
	stopHeartbeat()
	stopRecord()
	s.mu.Lock()
	defer s.mu.Unlock()
	return st, s.stopped
}

// remindUnknown returns what says, once an interactive harness on a
// terminal has ended, that its session file was unknown: the warning given
// before it started may have been drawn over by its screen, and scrolled out
// of sight; said again after it, it stays in view.
func remindUnknown(o Options, plan harness.Plan) func() {
	if plan.Unknown == "" || plan.Mode != "interactive" || !isTerminal(o.Stderr) {
		return func() {}
	}
	return func() {
		o.Log.Warn().Str("harness", plan.Harness).Msg("this run's session file was unknown before " + plan.Harness + " ran (" + plan.Unknown + "): it was guarded by the registry record only")
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && supervise.IsTerminal(f.Fd())
}

func signalName(s syscall.Signal) string {
	if s == 0 {
		return ""
	}
	return s.String()
}

// openRecord creates the --record file, 0600, never through a symlink.
func openRecord(path string) (*os.File, error) {
	f, err := safefile.Create(path)
	if err != nil {
		return nil, &UsageError{"cannot write the record: " + err.Error()}
	}
	return f, nil
}

// warmJSON builds encoding/json's encoders for markers and records, which
// it otherwise builds on first use, beside the rest of the start-up.
func warmJSON() {
	json.Marshal(marker.Marker{})                             // Best effort: only a cache is filled.
	json.Marshal(registry.Record{Padrun: &registry.Padrun{}}) // Best effort.
}

// notify registers sigs for delivery in the background, except those
// ignored at start: they stay ignored, for padrun and, through exec, for its
// child. The channel it returns closes once all are registered.
func notify(c chan<- os.Signal, sigs []os.Signal) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, s := range sigs {
			if !signal.Ignored(s) {
				signal.Notify(c, s)
			}
		}
	}()
	return done
}

// acquire takes every file in sorted order, waiting up to o.Wait while one
// is held. A waiter holds nothing while it waits.
func (s *session) acquire(files []string, proto marker.Marker, sigs <-chan os.Signal) error {
	deadline := time.Now().Add(s.o.Wait)
	blockOn := ""
	said := false
	for {
		err := s.acquireAll(files, proto, blockOn, sigs, deadline)
		var held *marker.HeldError
		if errors.As(err, &held) && s.parent > 0 && held.Holder != nil && held.Holder.Pid == s.parent {
			held.Outer, held.Waitable = true, false // it outlives this run
		}
		if err == nil || !errors.As(err, &held) || !held.Waitable {
			return err
		}
		if !time.Now().Before(deadline) {
			if s.o.Wait > 0 {
				return &WaitedError{HeldError: held, Waited: s.o.Wait}
			}
			return err
		}
		if !said {
			<-s.registered
			fmt.Fprintf(s.o.Stderr, "padrun: waiting up to %s for %s: %s\n", s.o.Wait, held.File, Describe(held, time.Now()))
			said = true
		}
		blockOn = ""
		if held.Busy {
			blockOn = held.File // block on its lock: no polling
			continue
		}
		if err := pause(sigs, deadline, 200*time.Millisecond); err != nil {
			return err
		}
	}
}

// acquireAll takes every file, blockOn first and waiting for it, the others
// without waiting. On failure it releases what it took.
func (s *session) acquireAll(files []string, proto marker.Marker, blockOn string, sigs <-chan os.Signal, deadline time.Time) error {
	order := files
	if blockOn != "" {
		order = append([]string{blockOn}, slices.DeleteFunc(slices.Clone(files), func(f string) bool { return f == blockOn })...)
	}
	for _, f := range order {
		m := proto
		m.Nonce = uuid.NewString()
		var l *marker.Lock
		var err error
		if f == blockOn {
			l, err = acquireWaiting(f, m, s.self, sigs, deadline)
		} else {
			l, err = marker.Acquire(f, m, s.self, nil)
		}
		if err != nil {
			s.release()
			return err
		}
		s.warnFS(l)
		s.locks = append(s.locks, l)
	}
	return nil
}

// acquireWaiting acquires f, blocking on its busy lock until the deadline
// or a signal.
func acquireWaiting(f string, m marker.Marker, self ident.Self, sigs <-chan os.Signal, deadline time.Time) (*marker.Lock, error) {
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	aborted := make(chan syscall.Signal, 1)
	stop, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		select {
		case sig := <-sigs:
			aborted <- sig.(syscall.Signal)
			cancel()
		case <-stop:
		}
	}()
	l, err := marker.Acquire(f, m, self, ctx.Done())
	close(stop)
	<-finished
	select {
	case sig := <-aborted:
		if l != nil {
			l.Release() // Best effort: the run is abandoned.
		}
		return nil, &AbortError{sig}
	default:
	}
	if err == marker.ErrCanceled {
		return marker.Acquire(f, m, self, nil) // the deadline: one last try, for the refusal
	}
	return l, err
}
