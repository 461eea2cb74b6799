//go:build linux

package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"

	"github.com/padrun/padrun/marker/ident"
)

// scriptCmd is a command that scripts add to testscript's own.
type scriptCmd = func(*testscript.TestScript, bool, []string)

// scriptCmds are the commands of every script, one line each: its usage and
// what it does. The code of each is beside what it tests; its doc comment
// says more.
func scriptCmds() map[string]scriptCmd {
	return map[string]scriptCmd{
		// waitfor FORM ARG...: wait, with a deadline, for a process, a file, a line or a pane (below).
		"waitfor": cmdWaitfor,
		// warns REGEXP...: the warnings the script calls for; any other fails it at its end (warnings_test.go).
		"warns": cmdWarns,
		// start NAME [-stdin=F] [-stdout=F] [-stderr=F] [-rpc=PROMPT] [VAR=v...] PROG [ARG...]: PROG in the background.
		"start": cmdStart,
		// run STATUS [-stdin=F] [-stdout=F] [VAR=v...] PROG [ARG...]: PROG in the foreground, ending with STATUS.
		"run": cmdRun,
		// signal SIG FILE:KEY: send SIG to the pid KEY of a ready file.
		"signal": cmdSignal,
		// sigproc SIG NAME: send SIG to a process started with start.
		"sigproc": cmdSigproc,
		// checkmarker MARKER READY: every identity field of a live padrun's marker against the ready file and the kernel.
		"checkmarker": cmdCheckMarker,
		// checkrecord DIR READY: the registry record of the padrun of the ready file.
		"checkrecord": cmdCheckRecord,
		// writemarker FILE KIND: write FILE.live.json as another tool or a dead padrun would.
		"writemarker": cmdWriteMarker,
		// contend N FILE [wait|nowait] [ROUNDS]: N padruns on FILE at once: one runs at a time.
		"contend": cmdContend,
		// mkrandom FILE BYTES: write random bytes.
		"mkrandom": cmdMkrandom,
		// [!] mode FILE PERM: FILE's permission bits are PERM.
		"mode": cmdMode,
		// ispid NAME FILE:KEY: the started process NAME has the pid of the ready file.
		"ispid": cmdIsPid,
		// records DIR N: DIR holds N registry records.
		"records": cmdRecords,
		// fakemodel: start the fake model server and point every harness at it.
		"fakemodel": cmdFakeModel,
		// keysuntil SOCKET TARGET KEY... PATTERN: send the keys to a tmux pane, together, until it matches PATTERN.
		"keysuntil": cmdKeysuntil,
		// keysuntilgrep SOCKET TARGET KEY FILE PATTERN: send KEY to a tmux pane until a line of FILE matches PATTERN.
		"keysuntilgrep": cmdKeysuntilGrep,
		// typein SOCKET TARGET TEXT PATTERN: type TEXT into a tmux pane a character at a time, each once PATTERN shows what was typed before it.
		"typein": cmdTypein,
		// forks FILE N: a pi session file's tree has N forks.
		"forks": cmdForks,
		// normcmp A B: A and B are equal once timestamps and ids are masked.
		"normcmp": cmdNormcmp,
		// newest VAR DIR PATTERN: VAR is the newest file below DIR whose name matches.
		"newest": cmdNewest,
		// headerid VAR FILE: VAR is the session id of a session file's first line.
		"headerid": cmdHeaderID,
		// jsonget VAR FILE KEY: VAR is a top-level string or number of a JSON file.
		"jsonget": cmdJSONGet,
		// procstate FILE:KEY STATES: wait until the pid of the ready file is in one of STATES.
		"procstate": cmdProcstate,
		// delivered FILE:KEY SIG: wait until SIG is pending for no thread of the pid of the ready file.
		"delivered": cmdDelivered,
		// installbin DIR: copy padrun and fakeharness into DIR for other users.
		"installbin": cmdInstallbin,
		// padrecord DIR NAME KIND [cwd=DIR]: write DIR/NAME as pad writes a record of KIND.
		"padrecord": cmdPadRecord,
		// [!] lsrow FILE NAME [KEY=JSON|KEY=-|KEY=@mtime...]: the row of ls --json output for NAME, and its keys.
		"lsrow": cmdLsRow,
		// lsrows FILE NAME...: the rows of ls --json output are exactly NAME..., in any order.
		"lsrows": cmdLsRows,
		// rpcstate VAR FILE: VAR is the last sessionFile pi's get_state reported in an RPC transcript.
		"rpcstate": cmdRPCState,
		// markerpid NAME|FILE:KEY MARKER: the marker's holder is that process.
		"markerpid": cmdMarkerPid,
		// pidvar VAR FILE:KEY: VAR is the pid KEY of a ready file.
		"pidvar": cmdPidvar,
		// nointerleave FILE: the sessions that wrote a file's lines never interleave.
		"nointerleave": cmdNointerleave,
		// misclaim pi SOURCE | misclaim codex OTHERDIR: a folder watcher never claims another run's file.
		"misclaim": cmdMisclaim,
		// etcdcluster: a three-member etcd cluster for the script, $ETCD its endpoints.
		"etcdcluster": cmdEtcdCluster,
		// etcdmachine NAME DIR: on-NAME runs a command on machine NAME, with its own copy of $WORK/DIR.
		"etcdmachine": cmdEtcdMachine,
		// basename VAR PATH: VAR is PATH's last element.
		"basename": cmdBasename,
	}
}

// sharedFolderCmds are the shared-folder scripts' commands besides
// scriptCmds: they need the machines those scripts make.
var sharedFolderCmds = map[string]scriptCmd{
	// machine NAME ID [MOUNTS]: start machine ID, its own namespaces, ids and bindfs mount.
	"machine": cmdMachine,
	// in MACHINE run|start ...: run or start a program inside a machine.
	"in": cmdIn,
	// crash NAME: kill machine NAME at once and wait until it is gone.
	"crash": cmdCrash,
	// lease mtime|created|same|after NAME ...: save a time, then check another against it.
	"lease": cmdLease,
	// racers N ROUNDS MACHINE STALE: N padruns take over a stale marker at once: one wins each round.
	"racers": cmdRacers,
}

// waitForm is one form of waitfor: how many arguments it takes, how long it
// waits, and whether it may be negated.
type waitForm struct {
	usage  string
	args   int
	within time.Duration
	neg    bool
	run    func(ts *testscript.TestScript, neg bool, args []string, within time.Duration)
}

// waitForms are waitfor's forms. Each keeps its own deadline: gone's five
// seconds, say, is half the default --grace, so a run that waits out the
// grace still fails.
var waitForms = map[string]waitForm{
	// exit NAME STATUS: a started process ends with STATUS (sig:NAME for a signal); its output becomes the script's.
	"exit": {"NAME STATUS", 2, time.Minute, false, waitExit},
	// file FILE: FILE exists. Two minutes, as grep: what a harness makes
	// as it starts (kilo's guards' folder, at its companion's first claim)
	// comes after more than 30 s on a loaded machine.
	"file": {"FILE", 1, 2 * time.Minute, false, waitFile},
	// gone FILE: FILE no longer exists.
	"gone": {"FILE", 1, time.Minute, false, waitGone},
	// grep FILE PATTERN: a line of FILE matches PATTERN. Two minutes: kilo
	// spends some 10 s of CPU before its first model call, which on a
	// loaded machine comes after more than 30 s.
	"grep": {"FILE PATTERN", 2, 2 * time.Minute, false, waitGrep},
	// sqlite DB QUERY PATTERN: a line of what sqlite3 prints for QUERY on DB
	// matches PATTERN: a harness's own write that lands when it will.
	"sqlite": {"DB QUERY PATTERN", 3, 2 * time.Minute, false, waitSqlite},
	// touch FILE: FILE's mtime moves past what it is now, the file not replaced.
	"touch": {"FILE", 1, 10 * time.Second, false, waitTouch},
	// [!] pane SOCKET TARGET PATTERN: a tmux pane's text matches PATTERN (negated: stops matching).
	// Two minutes: kilo's TUI, beside other work (load 15), drew nothing
	// within one.
	"pane": {"SOCKET TARGET PATTERN", 3, 2 * time.Minute, true, waitPane},
	// [!] dead FILE:KEY: the pid of a ready file is gone (negated: it is alive now, no wait).
	"dead": {"FILE:KEY", 1, 5 * time.Second, true, waitDead},
	// unpopulated CGROUP: no process is counted in the cgroup folder
	// CGROUP any more (its cgroup.events says "populated 0"), or it is
	// gone: the scripts beside it run padrun prune, whose cgroup pass
	// removes an empty cgroup of a dead padrun as soon as it is empty.
	"unpopulated": {"CGROUP", 1, time.Minute, false, waitUnpopulated},
}

// waitfor FORM ARG... waits, polling with the form's deadline, for what
// FORM names; see waitForms.
func cmdWaitfor(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) == 0 {
		ts.Fatalf("usage: waitfor %s ...", strings.Join(slices.Sorted(maps.Keys(waitForms)), "|"))
	}
	f, ok := waitForms[args[0]]
	if !ok {
		ts.Fatalf("waitfor: no form %q: want one of %s", args[0], strings.Join(slices.Sorted(maps.Keys(waitForms)), ", "))
	}
	if (neg && !f.neg) || len(args)-1 != f.args {
		ts.Fatalf("usage: %swaitfor %s %s", map[bool]string{true: "[!] "}[f.neg], args[0], f.usage)
	}
	waited := false
	defer func() {
		if !waited && args[0] != "pane" {
			logPanes(ts) // what a TUI shows says why it did not come
			logDebugLog(ts)
			logProcs(ts)
		}
	}()
	f.run(ts, neg, args[1:], f.within)
	waited = true
}

// logPanes logs the text of every pane of the tmux servers whose sockets
// are in $WORK.
func logPanes(ts *testscript.TestScript) {
	socks, _ := filepath.Glob(filepath.Join(ts.Getenv("WORK"), "*.sock"))
	for _, sock := range socks {
		list, err := exec.Command("tmux", "-S", sock, "list-panes", "-a", "-F", "#{session_name}:#{window_index}.#{pane_index}").Output()
		if err != nil {
			continue // not a tmux server's, or it has ended
		}
		for _, target := range strings.Fields(string(list)) {
			text, _ := exec.Command("tmux", "-S", sock, "capture-pane", "-p", "-t", target).Output()
			ts.Logf("tmux pane %s of %s shows:\n%s", target, filepath.Base(sock), bytes.TrimRight(text, "\n"))
		}
	}
}

// logDebugLog logs the last lines of the debug log that a script asks
// gemini to write ($GEMINI_DEBUG_LOG_FILE): what gemini did while it drew
// nothing new.
func logDebugLog(ts *testscript.TestScript) {
	path := ts.Getenv("GEMINI_DEBUG_LOG_FILE")
	if path == "" {
		return
	}
	data, err := os.ReadFile(path)
	if err != nil {
		ts.Logf("gemini's debug log: %v", err)
		return
	}
	lines := strings.SplitAfter(string(data), "\n")
	ts.Logf("the last lines of gemini's debug log %s:\n%s", path, strings.Join(lines[max(0, len(lines)-60):], ""))
}

func waitExit(ts *testscript.TestScript, _ bool, args []string, within time.Duration) {
	v, ok := procs.LoadAndDelete(ts.Getenv("WORK") + "\x00" + args[0])
	if !ok {
		ts.Fatalf("waitfor exit: %s was not started", args[0])
	}
	awaitProc(ts, v.(*proc), args[1])
}

func waitFile(ts *testscript.TestScript, _ bool, args []string, within time.Duration) {
	path := ts.MkAbs(args[0])
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
	ts.Fatalf("%s did not appear within %s", args[0], within)
}

func waitGone(ts *testscript.TestScript, _ bool, args []string, within time.Duration) {
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Lstat(ts.MkAbs(args[0])); os.IsNotExist(err) {
			return
		}
	}
	ts.Fatalf("%s is still there after %s", args[0], within)
}

func waitGrep(ts *testscript.TestScript, _ bool, args []string, within time.Duration) {
	re, err := regexp.Compile("(?m)" + args[1])
	ts.Check(err)
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if b, err := os.ReadFile(ts.MkAbs(args[0])); err == nil && re.Match(b) {
			return
		}
	}
	ts.Fatalf("no line of %s matched %s within %s", args[0], args[1], within)
}

func waitUnpopulated(ts *testscript.TestScript, _ bool, args []string, within time.Duration) {
	dir := ts.MkAbs(args[0])
	events := filepath.Join(dir, "cgroup.events")
	empty := regexp.MustCompile(`(?m)^populated 0$`)
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		b, err := os.ReadFile(events)
		if errors.Is(err, fs.ErrNotExist) || err == nil && empty.Match(b) {
			return
		}
	}
	ts.Fatalf("cgroup %s was still populated after %s%s", args[0], within, cgroupState(dir))
}

// cgroupState describes, for a wait on the cgroup folder dir that timed
// out, what the kernel still counts in it: its files, and every task of
// /proc (zombies too) that names it.
func cgroupState(dir string) string {
	var b strings.Builder
	for _, name := range []string{"cgroup.events", "cgroup.procs", "cgroup.threads", "cgroup.stat"} {
		body, err := os.ReadFile(filepath.Join(dir, name))
		fmt.Fprintf(&b, "\n%s: %q %v", name, body, err)
	}
	rel := dir
	for _, mnt := range []string{"/sys/fs/cgroup/unified", "/sys/fs/cgroup"} {
		if r, ok := strings.CutPrefix(dir, mnt+"/"); ok {
			rel = "0::/" + r
			break
		}
	}
	tasks, _ := filepath.Glob("/proc/[0-9]*/task/[0-9]*")
	for _, task := range tasks {
		if cg, _ := os.ReadFile(task + "/cgroup"); strings.Contains(string(cg), rel+"\n") {
			stat, _ := os.ReadFile(task + "/stat")
			fmt.Fprintf(&b, "\n%s: %s", task, bytes.TrimSpace(stat))
		}
	}
	return b.String()
}

func waitSqlite(ts *testscript.TestScript, _ bool, args []string, within time.Duration) {
	re, err := regexp.Compile("(?m)" + args[2])
	ts.Check(err)
	var out []byte
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		out, err = exec.Command("sqlite3", ts.MkAbs(args[0]), args[1]).CombinedOutput()
		if err == nil && re.Match(out) {
			return
		}
	}
	ts.Fatalf("sqlite3 %s never printed a line matching %s within %s; last it printed:\n%s", args[0], args[2], within, out)
}

func waitTouch(ts *testscript.TestScript, _ bool, args []string, within time.Duration) {
	var first unix.Stat_t
	ts.Check(unix.Stat(ts.MkAbs(args[0]), &first))
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var st unix.Stat_t
		ts.Check(unix.Stat(ts.MkAbs(args[0]), &st))
		if st.Ino != first.Ino {
			ts.Fatalf("%s was replaced, not touched", args[0])
		}
		if st.Mtim != first.Mtim {
			return
		}
	}
	ts.Fatalf("the mtime of %s did not move within %s", args[0], within)
}

func waitPane(ts *testscript.TestScript, neg bool, args []string, within time.Duration) {
	if text, ok := watchPane(ts, args[0], args[1], args[2], !neg, within); !ok {
		ts.Fatalf("pane %s never matched %s; it shows:\n%s", args[1], args[2], text)
	}
}

func waitDead(ts *testscript.TestScript, neg bool, args []string, within time.Duration) {
	pid := readyPid(ts, args[0])
	alive := func() bool {
		f, _ := ident.Probe(pid, "")
		return f.Verdict == ident.Alive
	}
	if neg {
		if !alive() {
			ts.Fatalf("pid %d is gone", pid)
		}
		return
	}
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if !alive() {
			return
		}
	}
	ts.Fatalf("pid %d is still alive after %s", pid, within)
}
