//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"
)

// field22 reads a pid's start time from /proc, parsed here on its own so
// that the test does not trust the code it checks.
func field22(ts *testscript.TestScript, pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	ts.Check(err)
	s := string(b)
	return strings.Fields(s[strings.LastIndex(s, ")")+2:])[19]
}

func trimmedFile(ts *testscript.TestScript, path string) string {
	b, err := os.ReadFile(path)
	ts.Check(err)
	return strings.TrimSpace(string(b))
}

// checkmarker MARKER READY checks every identity field of a live padrun's
// marker against the pids in the ready file and the kernel's own files.
func cmdCheckMarker(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: checkmarker MARKER READY")
	}
	padrun, child := readyPid(ts, args[1]+":padrun"), readyPid(ts, args[1]+":child")
	var m map[string]any
	// The child's pid is added once it has started: poll for it.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		m = readJSON(ts, args[0])
		if m["childPid"] != nil || time.Now().After(deadline) {
			break
		}
	}
	var ns unix.Stat_t
	ts.Check(unix.Stat("/proc/self/ns/pid", &ns))
	want := map[string]any{
		"v": 1.0, "tool": "padrun", "pid": float64(padrun), "startToken": field22(ts, padrun),
		"childPid": float64(child), "childStartToken": field22(ts, child),
		"bootId":       trimmedFile(ts, "/proc/sys/kernel/random/boot_id"),
		"pidNamespace": strconv.FormatUint(ns.Ino, 10),
		"uid":          float64(os.Getuid()),
	}
	if id, err := os.ReadFile("/etc/machine-id"); err == nil {
		want["machineId"] = strings.TrimSpace(string(id))
	}
	if ino, ok := nsInode("time"); ok {
		want["timeNamespace"] = ino
	}
	for k, v := range want {
		if m[k] != v {
			ts.Fatalf("marker %s = %v, want %v", k, m[k], v)
		}
	}
	if _, err := uuid.Parse(fmt.Sprint(m["nonce"])); err != nil {
		ts.Fatalf("marker nonce %v is not a UUID", m["nonce"])
	}
	if sf := fmt.Sprint(m["sessionFile"]); !filepath.IsAbs(sf) || sf+".live.json" != ts.MkAbs(args[0]) {
		ts.Fatalf("marker sessionFile = %s, want the absolute path of %s", sf, args[0])
	}
	if _, err := time.Parse(time.RFC3339Nano, fmt.Sprint(m["createdAt"])); err != nil {
		ts.Fatalf("marker createdAt: %v", err)
	}
}

// nsInode returns the inode of this process's namespace of kind, as padrun
// records it; ok is false where the kernel has none.
func nsInode(kind string) (string, bool) {
	var st unix.Stat_t
	if unix.Stat("/proc/self/ns/"+kind, &st) != nil {
		return "", false
	}
	return strconv.FormatUint(st.Ino, 10), true
}

// checkrecord DIR READY checks the registry record of the padrun in the ready file.
func cmdCheckRecord(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: checkrecord REGDIR READY")
	}
	padrun, child := readyPid(ts, args[1]+":padrun"), readyPid(ts, args[1]+":child")
	path := filepath.Join(args[0], strconv.Itoa(padrun)+".json")
	var r map[string]any
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		r = readJSON(ts, path)
		if r["padrun"].(map[string]any)["child_pid"] != nil || time.Now().After(deadline) {
			break
		}
	}
	want := map[string]any{
		"session_pid": float64(padrun), "pid": float64(padrun), "proc_start": field22(ts, padrun),
		"session_pid_source": "self", "session_pid_verified": true, "cwd": ts.Getenv("WORK"),
	}
	for k, v := range want {
		if r[k] != v {
			ts.Fatalf("record %s = %v, want %v", k, r[k], v)
		}
	}
	p := r["padrun"].(map[string]any)
	for _, kind := range []string{"pid", "time"} {
		if ino, ok := nsInode(kind); ok && p[kind+"_namespace"] != ino {
			ts.Fatalf("record padrun.%s_namespace = %v, want %s", kind, p[kind+"_namespace"], ino)
		}
	}
	if p["child_pid"] != float64(child) || p["child_proc_start"] != field22(ts, child) {
		ts.Fatalf("record child = %v/%v, want %d/%s", p["child_pid"], p["child_proc_start"], child, field22(ts, child))
	}
	if _, err := time.Parse(time.RFC3339Nano, fmt.Sprint(r["registered_at"])); err != nil {
		ts.Fatalf("record registered_at: %v", err)
	}
	b, _ := json.Marshal(r)
	if bytes.Contains(b, []byte("--")) {
		ts.Fatalf("record holds arguments beyond argv[0]: %s", b)
	}
}

// deadPid returns the pid of a process that has exited and been reaped.
func deadPid(ts *testscript.TestScript) int {
	cmd := exec.Command("true")
	ts.Check(cmd.Run())
	return cmd.Process.Pid
}

// writemarker FILE KIND writes FILE.live.json as another tool (or a dead
// padrun) would: KIND is live, wrongtoken, otherboot, othermachine-fresh,
// othermachine-stale, otherns, corrupt or orphan; rawboot, upperboot,
// nodashboot and rawmachine write this boot's or machine's id in another
// form (a newline, upper case, no dashes). The live pid is this
// test process's own.
func cmdWriteMarker(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: writemarker FILE KIND")
	}
	self := os.Getpid()
	token := field22(ts, self)
	m := map[string]any{"tool": "othertool", "pid": self, "startToken": token}
	mtime := time.Now()
	switch args[1] {
	case "live":
	case "notoken":
		delete(m, "startToken")
	case "wrongtoken":
		m["startToken"] = "1"
	case "dead":
		m["pid"] = deadPid(ts)
	case "otherboot":
		m["bootId"] = "00000000-0000-0000-0000-000000000000"
	case "othermachine-fresh", "othermachine-stale":
		m["machineId"], m["hostname"], m["heartbeatSeconds"] = "ffffffffffffffffffffffffffffffff", "elsewhere", 30
		if args[1] == "othermachine-stale" {
			mtime = mtime.Add(-5 * time.Minute)
		}
	case "otherns":
		m["pidNamespace"] = "1"
	case "rawboot": // this boot's id as the kernel gives it, newline and all
		b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
		ts.Check(err)
		m["bootId"] = string(b)
	case "upperboot":
		m["bootId"] = strings.ToUpper(trimmedFile(ts, "/proc/sys/kernel/random/boot_id"))
	case "nodashboot":
		m["bootId"] = strings.ReplaceAll(trimmedFile(ts, "/proc/sys/kernel/random/boot_id"), "-", "")
	case "rawmachine": // this machine's id with dashes, upper case, a newline
		id, _ := os.ReadFile("/etc/machine-id") // Best effort: without one, padrun reads none either
		m["machineId"] = strings.ToUpper(dashedID(strings.TrimSpace(string(id)))) + "\n"
	case "orphan":
		m = map[string]any{"v": 1, "tool": "padrun", "pid": deadPid(ts), "startToken": "1", "childPid": self, "childStartToken": token}
	case "corrupt":
		path := ts.MkAbs(args[0] + ".live.json")
		ts.Check(os.WriteFile(path, []byte(`{"tool":"othertool","pid":`), 0o600))
		return
	default:
		ts.Fatalf("writemarker: unknown kind %s", args[1])
	}
	b, err := json.Marshal(m)
	ts.Check(err)
	path := ts.MkAbs(args[0] + ".live.json")
	ts.Check(os.WriteFile(path, b, 0o600))
	ts.Check(os.Chtimes(path, mtime, mtime))
}

// contend N FILE [wait|nowait] [ROUNDS] starts N padruns on FILE at once,
// ROUNDS times (each on a file of its own). Without wait, exactly one must
// run and the others exit 75 while it holds the file; with wait, all run,
// one after another, and their start and end lines in FILE never interleave.
func cmdContend(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 4 {
		ts.Fatalf("usage: contend N FILE [wait|nowait] [ROUNDS]")
	}
	rounds := 1
	if len(args) == 4 {
		var err error
		rounds, err = strconv.Atoi(args[3])
		ts.Check(err)
	}
	for r := 0; r < rounds; r++ {
		file := args[1]
		if rounds > 1 {
			file = fmt.Sprintf("%s.%d", file, r)
		}
		contendOnce(ts, args[0], file, len(args) >= 3 && args[2] == "wait")
	}
}

func contendOnce(ts *testscript.TestScript, count, name string, wait bool) {
	n, err := strconv.Atoi(count)
	ts.Check(err)
	file := ts.MkAbs(name)
	ready := file + ".ready"
	procs := make([]*proc, n)
	for i := range procs {
		argv := []string{"padrun", "--guard", file, "--", "fakeharness", "--append", file}
		if wait {
			argv = []string{"padrun", "--wait", "2m", "--guard", file, "--", "fakeharness", "--append", file, "--hold", "10ms"}
		} else {
			// The holder holds until every other run has ended.
			argv = append(argv, "--ready", ready, "--trap", "USR1", "--trap-exit", "0")
		}
		procs[i] = startProc(ts, argv)
	}
	exits := map[string]int{}
	running := func() (left []*proc) {
		for _, p := range procs {
			select {
			case <-p.done:
			default:
				left = append(left, p)
			}
		}
		return left
	}
	want := 0 // with --wait, every run ends
	if !wait {
		want = 1 // without, the holder runs until the others have ended
	}
	deadline := time.Now().Add(3 * time.Minute)
	for len(running()) > want {
		if time.Now().After(deadline) {
			ts.Fatalf("%d padruns still run after 3 minutes", len(running()))
		}
		time.Sleep(10 * time.Millisecond) // polling for exits, with a deadline
	}
	if !wait {
		holder := running()[0]
		for {
			if _, err := os.Stat(ready); err == nil {
				break
			}
			if time.Now().After(deadline) {
				ts.Fatalf("the holder never became ready")
			}
			time.Sleep(5 * time.Millisecond)
		}
		if holder.cmd.Process.Pid != readyPid(ts, ready+":padrun") {
			ts.Fatalf("the ready file names another padrun than the one left running")
		}
		ts.Check(unix.Kill(holder.cmd.Process.Pid, unix.SIGUSR1))
	}
	for _, p := range procs {
		<-p.done
		exits[describeExit(p.cmd.ProcessState)]++
	}
	if wait && exits["0"] != n || !wait && (exits["0"] != 1 || exits["75"] != n-1) {
		ts.Fatalf("exit statuses %v, want %s", exits, map[bool]string{true: fmt.Sprintf("%d x 0", n), false: fmt.Sprintf("1 x 0 and %d x 75", n-1)}[wait])
	}
	runs := n
	if !wait {
		runs = 1
	}
	checkSerial(ts, file, runs)
	for _, p := range []string{file + ".live.json", file + ".live.lock"} {
		if _, err := os.Lstat(p); err == nil {
			ts.Fatalf("%s left behind", p)
		}
	}
}

// checkSerial checks that FILE holds runs start/end pairs, never interleaved.
func checkSerial(ts *testscript.TestScript, file string, runs int) {
	lines := strings.Fields(strings.ReplaceAll(trimmedFile(ts, file), "\n", " "))
	if len(lines) != 4*runs {
		ts.Fatalf("%s has %d words, want %d start/end lines:\n%s", file, len(lines), 2*runs, trimmedFile(ts, file))
	}
	for i := 0; i < len(lines); i += 4 {
		if lines[i] != "start" || lines[i+2] != "end" || lines[i+1] != lines[i+3] {
			ts.Fatalf("runs interleave at line %d of %s:\n%s", i/2+1, file, trimmedFile(ts, file))
		}
	}
}

// ispid NAME FILE:KEY checks that the started process NAME has the pid
// recorded in a ready file: PAD_SESSION_PID is padrun's own pid.
func cmdIsPid(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: ispid NAME FILE:KEY")
	}
	v, ok := procs.Load(ts.Getenv("WORK") + "\x00" + args[0])
	if !ok {
		ts.Fatalf("ispid: %s was not started", args[0])
	}
	if got, want := v.(*proc).cmd.Process.Pid, readyPid(ts, args[1]); got != want {
		ts.Fatalf("%s has pid %d, but %s says %d", args[0], got, args[1], want)
	}
}

// records DIR N checks that DIR holds N registry records (NNN.json).
func cmdRecords(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: records DIR N")
	}
	names, _ := filepath.Glob(filepath.Join(ts.MkAbs(args[0]), "*.json"))
	if strconv.Itoa(len(names)) != args[1] {
		ts.Fatalf("%s holds %d records, want %s: %v", args[0], len(names), args[1], names)
	}
}

// dashedID writes a 32-digit id as a UUID, with dashes.
func dashedID(id string) string {
	if len(id) != 32 {
		return id
	}
	return id[:8] + "-" + id[8:12] + "-" + id[12:16] + "-" + id[16:20] + "-" + id[20:]
}
