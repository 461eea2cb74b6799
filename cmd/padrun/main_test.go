//go:build linux

package main

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"

	"github.com/padrun/padrun/marker/etcdhold/tunnel"
	"github.com/padrun/padrun/wrapper"
)

var (
	contendN      = flag.Int("contend-n", 100, "padruns started at once on one file in the contention test")
	contendRounds = flag.Int("contend-rounds", 1, "rounds of the contention test, each way")
	floodN        = flag.Int("flood-n", 0, "entries the flood test makes in a watched folder (0: 40000, or more where fs.inotify.max_queued_events asks)")
)

// floodEntries is how many entries the flood test makes: -flood-n, or
// enough that each half of them overflows the kernel's inotify queue
// (every entry queues an event or two), and at least 40000.
func floodEntries() int {
	if *floodN > 0 {
		return *floodN
	}
	b, _ := os.ReadFile("/proc/sys/fs/inotify/max_queued_events")
	queued, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return max(40000, 2*queued+2000)
}

func TestMain(m *testing.M) {
	// An entry of a session's folder of harness entries is a symlink to
	// this binary named after a harness: padrun's, run as padrun -- NAME.
	// The names are not testscript's commands: scripts run the real pi.
	if wrapper.IsHarnessCommand(filepath.Base(os.Args[0])) {
		testPadrun()
	}
	if strings.HasSuffix(filepath.Base(os.Args[0]), ".test") {
		for _, sig := range []os.Signal{unix.SIGHUP, unix.SIGINT, unix.SIGQUIT} {
			if signal.Ignored(sig) {
				// Every padrun and harness the tests start would inherit
				// it (padrun keeps what it was started ignoring), and the
				// signal tests would fail with no word of why.
				fmt.Fprintf(os.Stderr, "padrun's tests: started with %s ignored (nohup, or a shell's background job), which every process they start inherits; start them without it (setsid, or in the foreground)\n", unix.SignalName(sig.(syscall.Signal)))
				os.Exit(1)
			}
		}
	}
	testscript.Main(m, map[string]func(){
		"padrun":          testPadrun,
		"fakeharness":     fakeHarness,
		"etcdchild":       etcdChild,
		"padrun-etcd-tls": func() { os.Exit(tunnel.Main(os.Args[1:])) },
		wrapper.FenceName: func() { os.Exit(wrapper.FenceMain(os.Args[1:])) },
	})
}

// testPadrun is padrun with the companion's greeting deadline taken from
// $PADRUN_TEST_GREETING, so that a script need not wait the default's time.
func testPadrun() {
	if d, err := time.ParseDuration(os.Getenv("PADRUN_TEST_GREETING")); err == nil {
		greetingWait = d
	}
	if f := os.Getenv("PADRUN_TEST_WARNINGS"); f != "" {
		warnHook = warnings(f)
	}
	main()
}

func TestScripts(t *testing.T) {
	testscript.Run(t, params("testdata/script"))
}

// params are the settings every script runs with: a registry and a home of
// its own, and the commands below.
func params(dir string) testscript.Params {
	return testscript.Params{
		Dir:                 dir,
		RequireExplicitExec: true,
		Condition:           installed,
		Setup: func(env *testscript.Env) error {
			env.Setenv("PADRUN_REGISTRY_DIR", filepath.Join(env.WorkDir, "reg"))
			env.Setenv("HOME", filepath.Join(env.WorkDir, "home"))
			examples, err := filepath.Abs("../../examples")
			if err != nil {
				return err
			}
			env.Setenv("EXAMPLES", examples)
			env.Setenv("REPO", filepath.Dir(examples))
			exampleEnv(env)
			env.Setenv("CONTEND_N", strconv.Itoa(*contendN))
			env.Setenv("CONTEND_ROUNDS", strconv.Itoa(*contendRounds))
			env.Setenv("FLOOD_N", strconv.Itoa(floodEntries()))
			envs.Store(env.WorkDir, env.Vars)
			env.Defer(func() {
				// A script that failed leaves its tmux server running.
				for _, sock := range []string{"sock", "tmux.sock"} {
					exec.Command("tmux", "-S", filepath.Join(env.WorkDir, sock), "kill-server").Run()
				}
			})
			return nil
		},
		Cmds: scriptCmds(),
	}
}

// goEnv is the Go build and module caches of the tests' own environment.
var goEnv = sync.OnceValue(func() []string {
	out, _ := exec.Command("go", "env", "GOCACHE", "GOMODCACHE").Output()
	return strings.Fields(string(out))
})

// exampleEnv lets the CI examples' install steps (go install, npm install
// -g) use this machine's caches, with a scripts's own HOME.
func exampleEnv(env *testscript.Env) {
	if ge := goEnv(); len(ge) == 2 {
		env.Setenv("GOCACHE", ge[0])
		env.Setenv("GOMODCACHE", ge[1])
	}
	npmCache := os.Getenv("NPM_CONFIG_CACHE")
	if home, err := os.UserHomeDir(); err == nil && npmCache == "" {
		npmCache = filepath.Join(home, ".npm")
	}
	env.Setenv("NPM_CONFIG_CACHE", npmCache)
}

// envs holds each script's environment as set up, by work folder; tracked
// holds the names of variables that commands set later.
var envs, tracked sync.Map

// setenv sets a variable for the script and for the processes it starts.
func setenv(ts *testscript.TestScript, key, value string) {
	ts.Setenv(key, value)
	keys, _ := tracked.LoadOrStore(ts.Getenv("WORK"), &sync.Map{})
	keys.(*sync.Map).Store(key, true)
}

// scriptEnv is the script's environment: as set up, with the script's own
// changes to those variables and to the few that scripts set.
func scriptEnv(ts *testscript.TestScript) []string {
	base, _ := envs.Load(ts.Getenv("WORK"))
	seen := map[string]bool{}
	var out []string
	for _, kv := range base.([]string) {
		k, _, _ := strings.Cut(kv, "=")
		seen[k] = true
		if v := ts.Getenv(k); v != "" {
			out = append(out, k+"="+v)
		}
	}
	extra := []string{"PAD_SESSION_PID", "PAD_AGENT", "PADRUN_LOG_FORMAT", "PADRUN_LOG_LEVEL", "PADRUN_SESSION_FILE", "PADRUN_MARKER"}
	if keys, ok := tracked.Load(ts.Getenv("WORK")); ok {
		keys.(*sync.Map).Range(func(k, _ any) bool {
			extra = append(extra, k.(string))
			return true
		})
	}
	for _, k := range extra {
		if v := ts.Getenv(k); v != "" && !seen[k] {
			seen[k] = true
			out = append(out, k+"="+v)
		}
	}
	return out
}

// proc is a process started by a script.
type proc struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	stderrFile     string // -stderr=FILE, or ""
	done           chan struct{}
	rpcDone        chan struct{}
	err            error
	// dump, set by a wait that ran out, makes the script's cleanup log
	// what the process wrote to stderr.
	dump atomic.Bool
}

var procs sync.Map // WORK + "\x00" + name -> *proc

// start NAME [-stdin=FILE] [-stdout=FILE] [-stderr=FILE] [-rpc=PROMPT] [VAR=value...] PROG [ARG...]
// starts PROG in the background with the script's environment.
func cmdStart(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: start NAME [-stdin=FILE] [-stdout=FILE] [VAR=value...] PROG [ARG...]")
	}
	p := startProc(ts, args[1:])
	if _, loaded := procs.LoadOrStore(ts.Getenv("WORK")+"\x00"+args[0], p); loaded {
		ts.Fatalf("start: %s already started", args[0])
	}
}

func startProc(ts *testscript.TestScript, args []string) *proc {
	env := scriptEnv(ts)
	p := &proc{done: make(chan struct{})}
	var stdin, stdout, stderr, rpcPrompt, rpcScript string
	for len(args) > 0 {
		if v, ok := strings.CutPrefix(args[0], "-stdin="); ok {
			stdin = v
		} else if v, ok := strings.CutPrefix(args[0], "-stdout="); ok {
			stdout = v
		} else if v, ok := strings.CutPrefix(args[0], "-stderr="); ok {
			stderr = v
		} else if v, ok := strings.CutPrefix(args[0], "-rpc="); ok {
			rpcPrompt = v
		} else if v, ok := strings.CutPrefix(args[0], "-rpcscript="); ok {
			rpcScript = v
		} else if strings.Contains(args[0], "=") && !strings.HasPrefix(args[0], "-") {
			env = append(env, args[0])
		} else {
			break
		}
		args = args[1:]
	}
	if len(args) == 0 {
		ts.Fatalf("start: no program")
	}
	path, err := lookPathIn(args[0], ts.Getenv("PATH"))
	ts.Check(err)
	p.cmd = exec.Command(path, args[1:]...)
	p.cmd.Args[0] = args[0]
	p.cmd.Dir = ts.MkAbs(".")
	p.cmd.Env = env
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if stdin != "" {
		f, err := os.Open(ts.MkAbs(stdin))
		ts.Check(err)
		ts.Defer(func() { f.Close() })
		p.cmd.Stdin = f
	}
	if stdout != "" {
		f, err := os.Create(ts.MkAbs(stdout))
		ts.Check(err)
		ts.Defer(func() { f.Close() })
		p.cmd.Stdout = f
	}
	if stderr != "" {
		p.stderrFile = ts.MkAbs(stderr)
		f, err := os.Create(p.stderrFile)
		ts.Check(err)
		ts.Defer(func() { f.Close() })
		p.cmd.Stderr = f
	}
	if rpcPrompt != "" || rpcScript != "" {
		// An RPC client: stdin stays open until the run is over.
		sink := p.cmd.Stdout
		p.cmd.Stdout = nil
		in, err := p.cmd.StdinPipe()
		ts.Check(err)
		out, err := p.cmd.StdoutPipe()
		ts.Check(err)
		p.rpcDone = make(chan struct{})
		if rpcScript != "" {
			go driveRPCScript(rpcSteps(ts, rpcScript), in, out, sink, ts.Getenv("WORK"), p.rpcDone)
		} else {
			go driveRPC(in, out, sink, rpcPrompt, p.rpcDone)
		}
	}
	ts.Check(p.cmd.Start())
	go func() {
		if p.rpcDone != nil {
			<-p.rpcDone // Wait closes the pipes: read them to the end first
		}
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	ts.Defer(func() {
		select {
		case <-p.done:
		default:
			p.kill()
			<-p.done
		}
		if p.dump.Load() {
			p.logStderr(ts)
		}
	})
	return p
}

// logStderr logs what an ended process wrote to stderr.
func (p *proc) logStderr(ts *testscript.TestScript) {
	text := p.stderr.Bytes()
	if p.stderrFile != "" {
		text, _ = os.ReadFile(p.stderrFile)
	}
	ts.Logf("%s (pid %d) wrote to stderr:\n%s", p.cmd.Args[0], p.cmd.Process.Pid, bytes.TrimRight(text, "\n"))
}

// logProcs logs what every process the script started and has not waited
// for is doing, with its descendants (state, each thread's wait channel and
// kernel stack), and marks it for its stderr to be logged once the script's
// cleanup has ended it; one that has ended says how, with its stderr: what
// a wait that ran out needs to be diagnosed.
func logProcs(ts *testscript.TestScript) {
	prefix := ts.Getenv("WORK") + "\x00"
	procs.Range(func(k, v any) bool {
		name, ok := strings.CutPrefix(k.(string), prefix)
		p := v.(*proc)
		if !ok {
			return true
		}
		logProc(ts, "started "+name, p)
		return true
	})
}

// logProc is logProcs for one process; one that has ended says how, and
// what it wrote to stderr.
func logProc(ts *testscript.TestScript, name string, p *proc) {
	select {
	case <-p.done:
		ts.Logf("%s: ended with %s", name, describeExit(p.cmd.ProcessState))
		p.logStderr(ts)
		return
	default:
	}
	for _, pid := range append([]int{p.cmd.Process.Pid}, descendants(p.cmd.Process.Pid)...) {
		ts.Logf("%s: %s", name, procState(pid))
	}
	p.dump.Store(true)
}

// procState describes pid from /proc: its command, state, and each
// thread's wait channel and kernel stack (the stacks need root).
func procState(pid int) string {
	dir := fmt.Sprintf("/proc/%d", pid)
	cmd, _ := os.ReadFile(dir + "/cmdline")
	cmd = bytes.ReplaceAll(bytes.TrimRight(cmd[:min(len(cmd), 200)], "\x00"), []byte{0}, []byte{' '})
	var b strings.Builder
	fmt.Fprintf(&b, "pid %d %q", pid, cmd)
	if status, err := os.ReadFile(dir + "/status"); err == nil {
		if _, state, ok := bytes.Cut(status, []byte("\nState:\t")); ok {
			state, _, _ = bytes.Cut(state, []byte{'\n'})
			fmt.Fprintf(&b, " %s", state)
		}
	}
	// Threads that wait in the same place are told once (a Go program's
	// idle threads all wait in futex).
	tasks, _ := filepath.Glob(dir + "/task/[0-9]*")
	var places []string
	threads := map[string][]string{}
	for _, task := range tasks {
		wchan, _ := os.ReadFile(task + "/wchan")
		stack, _ := os.ReadFile(task + "/stack")
		place := fmt.Sprintf("in %s\n    %s", wchan, strings.ReplaceAll(strings.TrimSpace(string(stack)), "\n", "\n    "))
		if threads[place] == nil {
			places = append(places, place)
		}
		threads[place] = append(threads[place], filepath.Base(task))
	}
	for _, place := range places {
		fmt.Fprintf(&b, "\n  thread %s %s", strings.Join(threads[place], ", "), place)
	}
	return b.String()
}

// kill SIGKILLs a started process and, first, its descendants: a harness's
// grandchild (gemini's re-launched node) outlives a SIGKILLed padrun and
// keeps the output pipes open, so that Wait would wait for it.
func (p *proc) kill() {
	for _, pid := range descendants(p.cmd.Process.Pid) {
		unix.Kill(pid, unix.SIGKILL) // Best effort: it may have ended.
	}
	p.cmd.Process.Kill()
}

// descendants lists the processes below pid, read from /proc.
func descendants(pid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	kids := map[int][]int{}
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		s := string(b)
		fields := strings.Fields(s[strings.LastIndex(s, ")")+1:])
		child, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
		if len(fields) > 1 {
			parent, _ := strconv.Atoi(fields[1])
			kids[parent] = append(kids[parent], child)
		}
	}
	var out []int
	for todo := kids[pid]; len(todo) > 0; todo = todo[1:] {
		out = append(out, todo[0])
		todo = append(todo, kids[todo[0]]...)
	}
	return out
}

func lookPathIn(name, path string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found in PATH", name)
}

func awaitProc(ts *testscript.TestScript, p *proc, want string) {
	select {
	case <-p.done:
	case <-time.After(time.Minute):
		logProcs(ts)
		logProc(ts, "run", p)
		p.kill()
		<-p.done
		ts.Fatalf("%s did not end within a minute", p.cmd.Args[0])
	}
	ts.Stdout().Write(p.stdout.Bytes())
	ts.Stderr().Write(p.stderr.Bytes())
	if got := describeExit(p.cmd.ProcessState); got != want {
		ts.Fatalf("%s ended with %s, want %s\nstderr:\n%s", p.cmd.Args[0], got, want, p.stderr.String())
	}
}

func describeExit(ps *os.ProcessState) string {
	ws := ps.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		return "sig:" + strings.TrimPrefix(unix.SignalName(ws.Signal()), "SIG")
	}
	return strconv.Itoa(ws.ExitStatus())
}

// run STATUS [-stdin=FILE] [-stdout=FILE] [VAR=value...] PROG [ARG...]
// runs PROG in the foreground and checks how it ended.
func cmdRun(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: run STATUS [VAR=value...] PROG [ARG...]")
	}
	awaitProc(ts, startProc(ts, args[1:]), args[0])
}

// readyPid reads KEY=PID from a ready file: FILE:KEY.
func readyPid(ts *testscript.TestScript, spec string) int {
	file, key, ok := strings.Cut(spec, ":")
	if !ok {
		ts.Fatalf("want FILE:KEY, got %q", spec)
	}
	for _, line := range strings.Split(ts.ReadFile(file), "\n") {
		if v, ok := strings.CutPrefix(line, key+"="); ok {
			pid, err := strconv.Atoi(v)
			ts.Check(err)
			return pid
		}
	}
	ts.Fatalf("%s has no %s", file, key)
	return 0
}

// signal SIG FILE:KEY sends SIG to the pid recorded in a ready file.
func cmdSignal(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: signal SIG FILE:KEY")
	}
	ts.Check(unix.Kill(readyPid(ts, args[1]), sigByName(args[0])))
}

// mode FILE PERM checks a file's permission bits.
func cmdMode(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: mode FILE PERM")
	}
	fi, err := os.Lstat(ts.MkAbs(args[0]))
	ts.Check(err)
	if got := fmt.Sprintf("%04o", fi.Mode().Perm()); (got == args[1]) == neg {
		ts.Fatalf("%s has mode %s, want %s%s", args[0], got, map[bool]string{true: "not "}[neg], args[1])
	}
}

// mkrandom FILE BYTES writes random bytes.
func cmdMkrandom(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: mkrandom FILE BYTES")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	b := make([]byte, n)
	rand.Read(b)
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), b, 0o600))
}

func readJSON(ts *testscript.TestScript, path string) map[string]any {
	var m map[string]any
	ts.Check(json.Unmarshal([]byte(ts.ReadFile(path)), &m))
	return m
}
