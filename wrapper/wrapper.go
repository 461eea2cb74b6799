// Package wrapper is the guarded run: it resolves the session identity and
// the files to guard, acquires them, registers the session, starts and
// supervises the child, and cleans up on every exit path.
package wrapper

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/padrun/padrun/marker"
	"github.com/padrun/padrun/marker/etcdhold"
	"github.com/padrun/padrun/marker/ident"
	"github.com/padrun/padrun/registry"
	"github.com/padrun/padrun/supervise"
	"github.com/padrun/padrun/supervise/cgroup"
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
	LogFile   *LogFile // the --log-file padrun appends to, or nil
	Command   []string // COMMAND [ARG...]
	Log       zerolog.Logger
	Stderr    io.Writer // the terminal people read, if any
	Env       Env       // padrun's environment (ReadEnv)

	// Transcript is --record's file: the session's output is written to
	// it too. (The registry's record is another thing.)
	Transcript string

	// OnWait, when set, tells people once that the run waits for held.
	OnWait func(held *marker.HeldError)
	// Refusal words a refusal for people, one line each: the harness's
	// companion shows it when a switch inside the harness is refused.
	Refusal func(err error) []string
	// Toast words a refusal for a TUI's toast (opencode's and kilo's), a
	// few short lines: the companion shows it over the harness's screen.
	Toast func(err error) []string

	// NoCompanion leaves the harness without its companion: switches
	// inside it are unguarded.
	NoCompanion bool
	// NoNestedGuard leaves the child's PATH alone: a harness started
	// inside the session is not run under padrun (docs/spec.md §7).
	NoNestedGuard bool
	// Greeting is how long a companion has to greet padrun; 0 is
	// DefaultGreeting.
	Greeting time.Duration

	// Etcd, when set, takes the hold in etcd too, under SessionKey when
	// the harness names no session id.
	Etcd       *etcdhold.Config
	SessionKey string
}

// UsageError is a run that cannot start as asked (exit 125): Err says why,
// Advice, when set, what to run instead.
type UsageError struct {
	Err    error
	Advice string
}

// usagef is a *UsageError; %w keeps the error it wraps.
func usagef(format string, args ...any) *UsageError {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Hint says what to run instead, or "".
func (e *UsageError) Hint() string { return e.Advice }

// AbortError says a signal arrived before the child started: the run was
// abandoned and padrun should die by that signal. It is the cancel cause of
// the run's context.
type AbortError struct{ Signal syscall.Signal }

func (e *AbortError) Error() string { return "wrapper: aborted by " + e.Signal.String() }

// WaitedError is a refusal after --wait ran out: how long the run waited.
type WaitedError struct {
	*marker.HeldError
	Waited time.Duration
}

func (e *WaitedError) Unwrap() error { return e.HeldError }

// ExecError says the command could not be run: not found (127), or not
// executable (126).
type ExecError = supervise.ExecError

// Result is how the child ended.
type Result struct {
	Code     int            // exit code, when it exited
	Signal   syscall.Signal // the signal that killed it, or 0
	TimedOut bool           // --timeout ran out
}

// session is one run's state, for cleanup. What is set before the child
// starts (o, self, proto, reg, parent, ctlDone, queued, cg, ahead, guards,
// etcd's client and the jobs) is read unlocked after. The held set has its lock
// (held.go); what is decided with it is guarded by that lock too, and the
// parts that have a lock of their own (childStop, overflow, greet, inUse,
// etcd.lease, the record writer) are taken under it, never the reverse.
type session struct {
	o     Options
	self  ident.Self
	proto marker.Marker // the marker published for each file, but its nonce
	reg   *registry.Registry
	// parent is the outer session's pid (PAD_SESSION_PID), or 0.
	parent int
	// ctlDone is closed when the control socket stops: a claim that
	// waits gives up then.
	ctlDone <-chan struct{}
	// queued, when set, records that the run waits for a file (--wait).
	queued func(file string)
	cg     *cgroup.Session // the session's cgroup, where padrun could make one
	// ahead is the pass over the processes that prepare started for the
	// first acquire (lookAhead), until that acquire takes it.
	ahead *outsideLook

	// heldSet is the files this run holds and the record derived from
	// them. Its lock, s.mu, also guards what the control handlers, the
	// folder watch, the follower, the leases and the supervisor's jobs
	// decide with it: warnedFS, names, follower, current, picker, and
	// etcd's keys and hold (not its lease). It is never held while
	// waiting for another local process (etcd's Add of a key claimed is
	// bounded): the record is written once it is released (unlock).
	heldSet

	warnedFS bool // the warning of a lock that other machines cannot see is given once

	// names are the names the run guards, followed while it runs (follow.go).
	names    []string
	follower *follower
	etcd     *etcdHold // the hold in etcd, with --etcd; its lease has a lock of its own

	// For companions that cannot cancel (claude): the harness's current
	// session file, the --guard files never released for it, how to end the
	// child, and why it was ended.
	current string
	guards  []string
	// childStop is how to end the child and why it was ended (kill,
	// stopped, term, childEnded), under a lock of its own (stop.go).
	childStop
	overflow overflows // the watches whose queue overflowed, told once, under a lock of its own

	// greet is the companion asked for, until it greets, under a lock of
	// its own (greeting.go); nil without one.
	greet *greeting

	// inUse are the harness's in-use locks the run's tree wrote and the
	// sessions they claimed (inuse.go), learned by its notify and the job
	// inUseWatch, under a lock of its own.
	inUse      inUseTracker
	inUseWatch *supervise.Job
	// picker is the harness's start-up picker while it is open (picker.go).
	picker *pickState
}

// Run runs the command as a guarded, supervised child and returns how it
// ended. Call it from the main goroutine: the child is killed when the
// thread that forked it exits, and supervise.Start locks the calling
// goroutine to that thread. A signal that arrives before
// the child starts abandons the run with an *AbortError.
func Run(o Options) (Result, error) {
	// The handlers stay installed after Run returns: padrun exits right
	// after, and a signal that arrives during cleanup must not cut it short.
	sigs := make(chan os.Signal, 16)
	supervise.KeepIgnored()
	registered := listen(sigs, supervise.AbortSignals)
	ctx, handOver := abortContext(sigs)
	defer handOver()
	said := &reminders{}
	o.Log = o.Log.Hook(said)

	s, r, err := prepareAbortable(ctx, o)
	registered() // before anything is taken: from here on a signal aborts the run
	if err != nil {
		return Result{}, err
	}
	defer s.cleanup()
	s.queued = func(file string) { s.queue(ctx, r, file) }
	if err := s.acquire(ctx, r.files); err != nil {
		return Result{}, err
	}
	s.cg.Make() // named by the markers now: a padrun killed from here on leaves none unnamed
	if err := s.startFence(); err != nil {
		return Result{}, err
	}
	// The transcript may be another session's: touch it only once this
	// run holds every file, so a refused run changes nothing.
	if o.Transcript != "" {
		f, err := openTranscript(o.Transcript, r.files)
		if err != nil {
			return Result{}, err
		}
		defer f.Close()
		r.transcript = f
	}
	if err := s.register(ctx, r); err != nil {
		return Result{}, err
	}
	s.holdPicker(r.plan.Picker)
	// Armed before the control socket serves: a companion's greeting is read
	// by the socket's goroutines, which start after this.
	s.armGreeting(r)
	stopControl, err := s.serveControl(r)
	if err != nil {
		return Result{}, err
	}
	defer stopControl()      // before cleanup: no claim comes in while it runs
	defer s.nestedGuard(r)() // once the hold is taken: a refused run makes nothing
	if err := handOver(); err != nil {
		return Result{}, err
	}
	// The late signals are registered beside the watches' start.
	lateRegistered := listen(sigs, supervise.LateSignals)
	defer s.follow()() // a rename from the acquire on is seen
	// The watch starts before the child: a file it creates at once is seen.
	// With a companion it is the fallback until the companion greets.
	stopWatch, watchChild := s.watch(r.plan.Watch, r.now)
	defer stopWatch()
	defer s.startLeases(append(slices.Clip(r.plan.Lease), heldLeases(r.plan)...))()
	s.greet.setWatch(stopWatch)
	defer s.watchInUse(r)() // before cleanup, which holds s.mu
	defer s.watchInUseClaims(r.plan)()
	defer s.watchPicker(r.plan)()
	lateRegistered() // each is forwarded from the child's start on
	child, err := supervise.Start(supervise.Spec{
		Path: r.path, Args: r.plan.Argv, Env: r.env,
		Pty: o.Pty, Transcript: r.transcript, Cgroup: s.cg, Inherit: s.lockFds(),
	})
	if err != nil {
		return Result{}, err
	}
	defer said.repeat(o, r.plan)() // last, once the terminal is restored
	defer s.greet.remind()()
	defer child.Close() // the terminal is restored on every path, before cleanup
	s.fenceChild(child)
	watchChild(child.Pid)
	s.greet.started()
	return s.supervise(child, sigs, stopWatch)
}

// serveControl starts the control socket of r (when it has one) and names
// it in the child's environment; the func returned stops it.
func (s *session) serveControl(r *run) (stop func(), err error) {
	if r.ctlDir == "" {
		return func() {}, nil
	}
	ctl, err := startControl(r.ctlDir, s.self.Pid, s.handleControl)
	if err != nil {
		return nil, err
	}
	s.ctlDone = ctl.done
	r.env = append(r.env, "PADRUN_CONTROL="+ctl.path)
	if s.o.Wait > 0 {
		r.env = append(r.env, fmt.Sprintf("PADRUN_WAIT=%d", int(s.o.Wait.Seconds()+0.999)))
	}
	return ctl.stop, nil
}

// run is what prepare learns of the run before it acquires anything.
type run struct {
	plan   harness.Plan
	files  []string // the files to acquire, canonical and sorted
	cwd    string
	agent  string
	path   string // the command, found in PATH
	ctlDir string // the companion's control folder, or ""
	now    time.Time
	env    []string // the child's environment
	// transcript is --record's file, once opened.
	transcript io.Writer

	companion string // the harness whose companion was asked for, or ""
}

// prepare resolves what the run guards and how, and readies the session:
// its marker, its cgroup's name and the registry. It changes nothing on disk
// but the companion's file.
func prepare(o Options) (*session, *run, error) {
	parent, err := o.Env.SessionPID()
	if err != nil {
		return nil, nil, err
	}
	s := &session{o: o, self: ident.ReadSelf(), parent: parent}
	s.inUse = inUseTracker{root: s.self.Pid, log: o.Log}
	r := &run{now: time.Now()}
	if r.cwd, err = canonicalDir("."); err != nil {
		return nil, nil, err
	}
	if err := s.resolve(r); err != nil {
		return nil, nil, err
	}
	if len(r.files) > 0 {
		s.ahead = lookAhead(s.self) // docs/spec.md §5 rule 9, beside the rest of the start
	}
	companion := harness.Companion(r.plan)
	if r.ctlDir, err = s.setupCompanion(&r.plan); err != nil {
		return nil, nil, err
	}
	if r.ctlDir != "" {
		// The folder watch stays armed until the companion greets (greeting.go).
		r.companion = companion
	}
	lookPath := supervise.LookPath
	if IsHarnessCommand(filepath.Base(r.plan.Argv[0])) {
		lookPath = supervise.LookPathNotSelf // never padrun itself, in its folder of harness entries or as an alias
	}
	if r.path, err = lookPath(r.plan.Argv[0], o.Env.Path); err != nil {
		return nil, nil, err
	}
	if r.agent, err = resolveAgent(o.Agent, r.cwd, o.Env.Agent, r.plan.Harness); err != nil {
		return nil, nil, err
	}
	if s.reg, err = openRegistry(); err != nil {
		return nil, nil, err
	}
	s.reg.OnWait = func(holder string) {
		o.Log.Warn().Str("holder", holder).Msg("waiting for the registry's lock (at most " + registry.LockWait.String() + ")")
	}
	s.proto = marker.New(s.self, "", "", r.now)
	p := &s.proto
	p.Version, p.Harness, p.Mode, p.Agent = Version, r.plan.Harness, r.plan.Mode, r.agent
	p.SessionID, p.Tty = r.plan.SessionID, terminal()
	p.HeartbeatSeconds = heartbeatSeconds(o.Heartbeat)
	s.cg = cgroup.New(cgroup.Tag(s.self))
	if s.cg != nil {
		p.Cgroup = s.cg.Path
	}
	r.env = childEnv(o.Env.Environ, s.self.Pid, r.agent, r.files)
	if r.ctlDir != "" {
		r.env = append(r.env, r.plan.CompanionEnv...)
	}
	if err := s.prepareEtcd(r); err != nil {
		return nil, nil, err
	}
	return s, r, nil
}

// prepareAbortable runs prepare on a goroutine of its own and returns at
// once when a signal cancels ctx: a step of prepare may be stuck in the
// kernel (a hung filesystem, a FIFO where a file was expected), and the
// signal must still end the run (docs/spec.md §2). prepare takes nothing, so there
// is nothing to release; the stuck goroutine goes with the process.
func prepareAbortable(ctx context.Context, o Options) (*session, *run, error) {
	type prepared struct {
		s   *session
		r   *run
		err error
	}
	done := make(chan prepared, 1)
	go func() {
		s, r, err := prepare(o)
		done <- prepared{s, r, err}
	}()
	select {
	case p := <-done:
		return p.s, p.r, p.err
	case <-ctx.Done():
		return nil, nil, context.Cause(ctx)
	}
}

// resolve reads the command line as its harness's and names the files to
// guard, warning of or, under --strict, refusing what it cannot guard.
func (s *session) resolve(r *run) error {
	o := s.o
	home, _ := os.UserHomeDir() // Best effort: adapters fall back to none.
	plan, err := harness.Resolve(o.Harness, o.Command, harness.Env{
		Getenv: o.Env.Getenv, Cwd: r.cwd, Home: home, NoPin: o.NoPin, NoCompanion: o.NoCompanion, StdinTTY: supervise.IsTerminal(os.Stdin.Fd()),
	})
	if err != nil {
		return &UsageError{Err: err}
	}
	if err := sessionFolders(append(slices.Clone(o.Guards), plan.Files...)...); err != nil {
		return err
	}
	files, err := guardedFiles(o.Guards, plan.Files)
	if err != nil {
		return &UsageError{Err: err}
	}
	if o.LogFile != nil {
		if err := checkLog(o.LogFile, files); err != nil {
			return err
		}
	}
	if err := unguarded(o, plan, files); err != nil {
		return err
	}
	if err := checkNames(files, o.Strict, func(msg string) { o.Log.Warn().Msg(msg) }); err != nil {
		return err
	}
	if plan.InUseClaims != "" && claimsWatched {
		plan.Unknown = "" // the harness's own in-use lock names it: a claim (inuseclaim.go)
	}
	if plan.Unknown != "" {
		if o.Strict {
			return usagef("cannot name the session file before %s runs (%s) and --strict is set", plan.Harness, plan.Unknown)
		}
		unknown := "session file unknown before " + plan.Harness + " runs (" + plan.Unknown + ")"
		if plan.Mode == harness.ModeInteractive && !o.NoCompanion && harness.Companion(plan) != "" {
			// A picker: its companion claims what the harness opens, or
			// padrun says that it never greeted (greeting.go). A command
			// line padrun cannot read stays a warning.
			o.Log.Info().Str("harness", plan.Harness).Msg(unknown + ": its companion claims the session " + plan.Harness + " opens")
		} else {
			o.Log.Warn().Str("harness", plan.Harness).Msg(unknown + ": running with the registry record only")
		}
	}
	claimed := plan.InUseClaims != "" && claimsWatched // its switches are claimed (inuseclaim.go)
	leased := len(plan.Lease) > 0 && leasesWork        // its opens of a held file are refused (lease_linux.go)
	if a, _ := harness.Lookup(plan.Harness); a.Unvetoed != "" && plan.Mode == harness.ModeInteractive && !claimed && !leased {
		o.Log.Warn().Str("harness", plan.Harness).Msg(a.Unvetoed)
	}
	warnUntested(o, plan)
	// Only argv[0] is logged: the rest may hold a prompt, which is private.
	o.Log.Debug().Str("command", filepath.Base(plan.Argv[0])).Str("harness", plan.Harness).
		Str("mode", plan.Mode).Strs("files", files).Msg("run")
	s.guards, _ = guardedFiles(o.Guards, nil) // Best effort: the same paths were resolved above.
	if len(plan.Files) > 0 {
		s.current, _ = CanonicalFile(plan.Files[0])
	}
	r.plan, r.files = plan, files
	s.names = followNames(append(slices.Clone(o.Guards), plan.Files...), files)
	return nil
}

// queue writes the record of a run that waits for file under --wait, so
// that ls shows it queued; register replaces it once the run holds its
// files, and cleanup removes it. A record that cannot be written leaves the
// wait unlisted, nothing more.
func (s *session) queue(ctx context.Context, r *run, file string) {
	s.rec = s.newRecord(r)
	s.rec.Padrun.WaitingFor = []string{file}
	if err := s.records.write(ctx, s.reg, s.derive()); err != nil {
		s.rec = nil
		s.o.Log.Debug().Err(err).Msg("record the queued run")
	}
}

// register writes the session's registry record, before the child starts.
func (s *session) register(ctx context.Context, r *run) error {
	s.rec = s.newRecord(r)
	// Nothing else runs yet: the first record is written here, waiting, so
	// that its refusal can end the run.
	err := s.records.write(ctx, s.reg, s.derive())
	var taken *registry.TakenError
	switch {
	case errors.As(err, &taken) && s.o.Strict:
		s.rec = nil
		return &UsageError{Err: fmt.Errorf("%w, and --strict is set", taken),
			Advice: "padrun ls shows it; once its session is gone, padrun prune --older-than 1h removes it; without --strict padrun runs without a record"}
	case errors.As(err, &taken):
		// Its pid is ours in another namespace: that session keeps its
		// record, and this one runs on the markers alone.
		s.rec = nil
		s.o.Log.Warn().Msg(taken.Error() + ": running without a record")
	case err != nil:
		s.rec = nil
		return err
	}
	return nil
}

// newRecord is the run's registry record, but its files.
func (s *session) newRecord(r *run) *registry.Record {
	return &registry.Record{
		SessionPID: s.self.Pid, SessionPIDSource: "self", SessionPIDVerified: true,
		ProcStart: s.self.StartToken, SessionID: r.plan.SessionID, Agent: r.agent,
		Pid: s.self.Pid, Cwd: r.cwd, RegisteredAt: r.now.UTC().Format(time.RFC3339Nano),
		Padrun: &registry.Padrun{
			Version: Version, Harness: r.plan.Harness, Mode: r.plan.Mode,
			ParentSessionPid: s.parent, Command: filepath.Base(r.plan.Argv[0]),
			PidNamespace: string(s.self.PidNamespace), TimeNamespace: string(s.self.TimeNamespace),
		},
	}
}

// supervise runs the started child to its end, then ends what it left of
// its session.
func (s *session) supervise(child *supervise.Child, sigs <-chan os.Signal, stopWatch func()) (Result, error) {
	stopped := s.startedChild(child.Kill, child.Stop)
	if _, lost := stopped.(*LostHoldError); lost {
		child.Stop() // a hold was lost before the child was known
	} else if stopped != nil {
		child.Kill() // a claim was refused before the child was known
	}
	s.o.Log.Debug().Int("child_pid", child.Pid).Msg("started")
	// The child's record and the heartbeat run in the supervisor's own
	// wait, and on while endRest ends what the child left.
	jobs := []supervise.Job{s.recordChild(childInfo{pid: child.Pid, pgid: child.Pgid, sid: child.Sid, inCgroup: child.Cgroup != ""})}
	if s.o.Heartbeat > 0 {
		jobs = append(jobs, s.heartbeat(s.o.Heartbeat))
	}
	if s.etcd != nil {
		jobs = append(jobs, s.fence(child))
	}
	if s.inUseWatch != nil {
		jobs = append(jobs, *s.inUseWatch)
	}
	st := child.Supervise(sigs, s.o.Grace, s.o.Timeout, jobs...)
	s.reapedChild(st, s.o.Grace)
	if s.etcd != nil {
		s.etcd.lease.reaped = true // the fencing job runs on in endRest, on this goroutine
	}
	s.o.Log.Debug().Int("code", st.Code).Str("signal", signalName(st.Signal)).Bool("timed_out", st.TimedOut).Msg("child ended")
	s.endRest(child, st.TimedOut)
	stopWatch()
	s.greet.childEnded() // once the watch has judged every file the child wrote
	s.mu.Lock()
	s.endFence()
	s.mu.Unlock()
	stopped = s.whyStopped()
	if stopped == nil && st.Err != nil {
		return Result{}, st.Err // never the zero status of a child whose end is unknown
	}
	return Result{Code: st.Code, Signal: st.Signal, TimedOut: st.TimedOut}, stopped
}

// isTerminal tells whether w, an *os.File or a writer in front of one,
// writes to a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && supervise.IsTerminal(f.Fd())
}

func signalName(s syscall.Signal) string {
	if s == 0 {
		return ""
	}
	return s.String()
}

// openTranscript opens the --record file, 0600, with openOutput's rules:
// an existing one, the user's own, is truncated; this runs once the hold is
// taken, so a refused run changes nothing.
func openTranscript(path string, guarded []string) (*os.File, error) {
	f, _, err := openOutput("--record", path, true, guarded)
	return f, err
}
