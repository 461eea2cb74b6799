//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"

	"github.com/padrun/padrun/marker/ident"
)

var (
	racersN      = flag.Int("racers", 20, "padruns of one machine taking over one stale marker at once, each on its own mount")
	racersRounds = flag.Int("racers-rounds", 3, "rounds of the racers test")
)

// TestSharedFolders runs two machines on one folder without a shared lock:
// each machine is a mount namespace with its own machine id and boot id,
// and its own bindfs (FUSE) mount of the folder, whose flock the other
// machine cannot see. Only the marker, its heartbeat and the break file
// keep two writers out.
func TestSharedFolders(t *testing.T) {
	requireRoot(t, "mount and make namespaces for the shared-folder tests")
	if _, err := os.Stat("/dev/fuse"); err != nil {
		unavailable(t, "the shared-folder tests need /dev/fuse")
	}
	requireTool(t, "bindfs", "unshare", "nsenter", "setpriv", "flock")
	p := params("testdata/sharedfs")
	maps.Copy(p.Cmds, sharedFolderCmds)
	setup := p.Setup
	p.Setup = func(env *testscript.Env) error {
		env.Setenv("RACERS", strconv.Itoa(*racersN))
		env.Setenv("RACERS_ROUNDS", strconv.Itoa(*racersRounds))
		return setup(env)
	}
	testscript.Run(t, p)
}

// machine NAME ID [MOUNTS] starts machine ID: a mount and pid namespace
// running machine.sh, which bind-mounts id-ID and boot-ID over the machine
// id and boot id and mounts the shared folder with bindfs at mnt (and at
// race/0 .. race/MOUNTS-1). Once it is ready, $NAME is the host pid of its
// init, for nsenter -t $NAME.
func cmdMachine(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: machine NAME ID [MOUNTS]")
	}
	name, id, mounts := args[0], args[1], "0"
	if len(args) == 3 {
		mounts = args[2]
	}
	ready := ts.MkAbs("ready-" + id)
	os.Remove(ready)
	// Should the test binary die, setpriv's death signal ends unshare, and
	// unshare's (--kill-child) ends the machine. At the script's end,
	// startProc's Defer kills unshare, which ends the machine the same way.
	p := startProc(ts, []string{"setpriv", "--pdeathsig", "KILL", "unshare", "--mount", "--pid", "--fork",
		"--kill-child", "--mount-proc", "sh", "machine.sh", id, mounts})
	procs.Store(ts.Getenv("WORK")+"\x00"+name, p)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		select {
		case <-p.done:
			ts.Fatalf("machine %s ended before it was ready: %v\n%s", id, p.err, p.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			ts.Fatalf("machine %s not ready within a minute", id)
		}
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", p.cmd.Process.Pid, p.cmd.Process.Pid))
	ts.Check(err)
	init := strings.Fields(string(b))
	if len(init) != 1 {
		ts.Fatalf("machine %s: unshare has children %q, want its init", id, init)
	}
	setenv(ts, name, init[0])
}

// in MACHINE run STATUS [-stdout=F] [-stderr=F] PROG [ARG...]
// in MACHINE start NAME [-stdout=F] [-stderr=F] PROG [ARG...]
// run or start PROG inside machine MACHINE (its mounts and pid namespace,
// its init's working folder).
func cmdIn(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 4 || (args[1] != "run" && args[1] != "start") {
		ts.Fatalf("usage: in MACHINE run STATUS|start NAME PROG [ARG...]")
	}
	enter, end := nsenter(ts, args[0])
	rest := args[3:]
	var opts []string // start's own options come before the program
	for len(rest) > 0 && strings.HasPrefix(rest[0], "-std") {
		opts, rest = append(opts, rest[0]), rest[1:]
	}
	argv := append(append(opts, enter...), rest...)
	if args[1] == "run" {
		awaitProc(ts, startProc(ts, argv), args[2])
		return
	}
	cmdStart(ts, false, append([]string{args[2]}, argv...))
	ts.Defer(end)
}

// nsenter is the command line that enters machine name, and a func that
// ends the machine. A process started in a machine holds its output pipes
// open while the machine lives: defer end after starting it, so that the
// machine ends before the process is reaped.
func nsenter(ts *testscript.TestScript, name string) (argv []string, end func()) {
	init, err := strconv.Atoi(ts.Getenv(name))
	ts.Check(err)
	token, err := ident.StartToken(init)
	ts.Check(err)
	end = func() {
		if t, err := ident.StartToken(init); err == nil && t == token {
			unix.Kill(init, unix.SIGKILL)
		}
	}
	return []string{"nsenter", "-t", strconv.Itoa(init), "-m", "-p", "-w", "--"}, end
}

// crash NAME kills machine NAME at once (SIGKILL to its init: every
// process in it dies, its mounts with them) and waits until it is gone.
func cmdCrash(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: crash NAME")
	}
	init, err := strconv.Atoi(ts.Getenv(args[0]))
	ts.Check(err)
	v, ok := procs.LoadAndDelete(ts.Getenv("WORK") + "\x00" + args[0])
	if !ok {
		ts.Fatalf("crash: no machine %s", args[0])
	}
	ts.Check(unix.Kill(init, unix.SIGKILL))
	<-v.(*proc).done
	// A pid namespace's init ends only once all of its processes have.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		if f, _ := ident.Probe(init, ""); f.Verdict != ident.Alive {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("machine %s still runs a minute after SIGKILL", args[0])
		}
	}
}

var leases sync.Map // WORK + "\x00" + NAME -> a time saved by lease

// lease mtime NAME FILE      saves FILE's mtime as NAME
// lease created NAME MARKER  saves the marker's createdAt as NAME
// lease same NAME FILE       checks that FILE's mtime is still NAME
// lease after NAME D MARKER  checks that MARKER's mtime, the time its holder
//
//	took over, is at least D after NAME, and not in the future
func cmdLease(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 {
		ts.Fatalf("usage: lease mtime|same|created|after NAME ...")
	}
	key := ts.Getenv("WORK") + "\x00" + args[1]
	switch {
	case args[0] == "mtime" && len(args) == 3:
		fi, err := os.Stat(ts.MkAbs(args[2]))
		ts.Check(err)
		leases.Store(key, fi.ModTime())
	case args[0] == "same" && len(args) == 3:
		v, ok := leases.Load(key)
		fi, err := os.Stat(ts.MkAbs(args[2]))
		ts.Check(err)
		if !ok || !fi.ModTime().Equal(v.(time.Time)) {
			ts.Fatalf("%s: mtime %v, want %v", args[2], fi.ModTime(), v)
		}
	case args[0] == "created" && len(args) == 3:
		var m struct{ CreatedAt time.Time }
		ts.Check(json.Unmarshal([]byte(ts.ReadFile(args[2])), &m))
		leases.Store(key, m.CreatedAt)
	case args[0] == "after" && len(args) == 4:
		d, err := time.ParseDuration(args[2])
		ts.Check(err)
		v, ok := leases.Load(key)
		if !ok {
			ts.Fatalf("lease: %s was not saved", args[1])
		}
		since := v.(time.Time)
		fi, err := os.Stat(ts.MkAbs(args[3]))
		ts.Check(err)
		took := fi.ModTime()
		ts.Logf("taken over %s after %s", took.Sub(since).Round(time.Millisecond), args[1])
		if took.Sub(since) < d {
			ts.Fatalf("taken over %s after %s, before %s had passed", took.Sub(since), args[1], d)
		}
		if took.After(time.Now()) {
			ts.Fatalf("the takeover time %s is in the future", took)
		}
	default:
		ts.Fatalf("usage: lease mtime|created|after NAME ...")
	}
}

// racers N ROUNDS MACHINE STALE: in each round, N padruns on machine
// MACHINE (each through its own mount race/I of the shared folder, so that
// no flock is shared between them) take over a copy of the stale marker
// STALE at once, released together from a FIFO. Exactly one may win each
// round; every other must be refused (75). The winner's child holds until
// all others have ended.
func cmdRacers(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 4 {
		ts.Fatalf("usage: racers N ROUNDS MACHINE STALE")
	}
	n, err := strconv.Atoi(args[0])
	ts.Check(err)
	rounds, err := strconv.Atoi(args[1])
	ts.Check(err)
	stale := ts.ReadFile(args[3])
	fi, err := os.Stat(ts.MkAbs(args[3]))
	ts.Check(err)
	atBreak := 0
	for r := 0; r < rounds; r++ {
		file := fmt.Sprintf("s-%d.jsonl", r)
		mp := ts.MkAbs(filepath.Join("shared", file+".live.json"))
		ts.Check(os.WriteFile(mp, []byte(stale), 0o600))
		ts.Check(os.Chtimes(mp, fi.ModTime(), fi.ModTime()))
		atBreak += raceOnce(ts, n, r, args[2], file)
	}
	ts.Logf("%d racers x %d rounds: %d refusals at the break file", n, rounds, atBreak)
	if atBreak == 0 {
		ts.Fatalf("no racer ever met another at the break file: the racers did not race")
	}
}

// raceOnce runs one round and returns how many racers were refused at the
// break file, while another was taking the file over.
func raceOnce(ts *testscript.TestScript, n, round int, machine, file string) int {
	dir := ts.MkAbs(fmt.Sprintf("race-%d", round))
	ts.Check(os.MkdirAll(dir, 0o755))
	gate, stop := filepath.Join(dir, "go"), filepath.Join(dir, "stop")
	ts.Check(unix.Mkfifo(gate, 0o600))
	ts.Check(unix.Mkfifo(stop, 0o600))
	racers := make([]*proc, n)
	for i := range racers {
		script := fmt.Sprintf(`echo > %[1]s/ready-%[2]d; read x < %[1]s/go; exec padrun --heartbeat 1s --guard race/%[2]d/%[3]s -- sh -c 'echo > %[1]s/won-%[2]d; read x < %[1]s/stop'`, dir, i, file)
		enter, end := nsenter(ts, machine)
		racers[i] = startProc(ts, append(enter, "sh", "-c", script))
		ts.Defer(end)
	}
	waitFor(ts, "racers ready", func() bool {
		for i := range racers {
			if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("ready-%d", i))); err != nil {
				return false
			}
		}
		return true
	})
	// Open read-write: never blocks, and a late reader still finds a writer.
	release := func(fifo string) *os.File {
		f, err := os.OpenFile(fifo, os.O_RDWR, 0)
		ts.Check(err)
		_, err = f.Write(bytes.Repeat([]byte("\n"), n))
		ts.Check(err)
		return f
	}
	g := release(gate)
	defer g.Close()
	won := func() (w []int) {
		for i := range racers {
			if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("won-%d", i))); err == nil {
				w = append(w, i)
			}
		}
		return w
	}
	ended := func() (e int) {
		for _, p := range racers {
			select {
			case <-p.done:
				e++
			default:
			}
		}
		return e
	}
	waitFor(ts, "racers ended", func() bool { return ended()+len(won()) >= n })
	if w := won(); len(w) != 1 {
		ts.Fatalf("round %d: racers %v all took the file", round, w)
	}
	atBreak := 0
	for _, p := range racers {
		select {
		case <-p.done:
			if got := describeExit(p.cmd.ProcessState); got != "75" {
				ts.Fatalf("round %d: a racer ended with %s, want 75\n%s", round, got, p.stderr.String())
			}
			if strings.Contains(p.stderr.String(), "taking the file over") {
				atBreak++
			}
		default:
		}
	}
	s := release(stop)
	defer s.Close()
	winner := racers[won()[0]]
	awaitProc(ts, winner, "0")
	return atBreak
}

// waitFor polls cond for at most two minutes.
func waitFor(ts *testscript.TestScript, what string, cond func() bool) {
	for deadline := time.Now().Add(2 * time.Minute); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			ts.Fatalf("%s: not within two minutes", what)
		}
	}
}
