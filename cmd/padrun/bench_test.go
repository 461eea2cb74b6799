//go:build linux

package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

var rounds = flag.Int("rounds", 10, "runs of each command in the side-by-side benchmarks")

// baseline is another padrun binary for BenchmarkOverhead to run beside
// this one, built CGO_ENABLED=0 too, in -previous's place.
var baseline = flag.String("baseline", "", "another padrun binary that BenchmarkOverhead runs beside this one, instead of -previous's")

// buildPadrun builds the real binary, as users run it, once per benchmark.
func buildPadrun(b testing.TB) string { return buildHere(b, "padrun", ".") }

// buildHere builds the main package in dir of this module, static as
// released: no dynamic loader at start.
func buildHere(b testing.TB, name, dir string) string {
	b.Helper()
	out := filepath.Join(b.TempDir(), name)
	cmd := exec.Command("go", "build", "-o", out, dir)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		b.Fatalf("go build: %v", err)
	}
	return out
}

// sample is one run's wall time and the CPU time of the whole process tree.
type sample struct{ wall, cpu time.Duration }

// alternate runs each command rounds times, one after another in turn, so
// that a noisy machine slows them alike, and returns their samples.
func alternate(b *testing.B, env []string, dir string, cmds ...[]string) [][]sample {
	b.Helper()
	out := make([][]sample, len(cmds))
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer null.Close()
	for r := 0; r < *rounds; r++ {
		for i, argv := range cmds {
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Env, cmd.Dir = env, dir
			cmd.Stdin, cmd.Stdout = null, null
			start := time.Now()
			if err := cmd.Run(); err != nil {
				b.Fatalf("%v: %v", argv, err)
			}
			wall := time.Since(start)
			ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
			cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
			out[i] = append(out[i], sample{wall, cpu})
		}
	}
	return out
}

func median(s []sample, f func(sample) time.Duration) time.Duration {
	d := make([]time.Duration, len(s))
	for i, x := range s {
		d[i] = f(x)
	}
	slices.Sort(d)
	if len(d)%2 == 0 {
		return (d[len(d)/2-1] + d[len(d)/2]) / 2
	}
	return d[len(d)/2]
}

func wallOf(s sample) time.Duration { return s.wall }
func cpuOf(s sample) time.Duration  { return s.cpu }

// report prints a table of medians, each against the first command, and
// reports the last command's ratios as metrics.
func report(b *testing.B, names []string, samples [][]sample) {
	b.Helper()
	base, baseCPU := median(samples[0], wallOf), median(samples[0], cpuOf)
	fmt.Printf("\n%-28s %12s %8s %12s %8s   (medians of %d alternated runs)\n", "command", "wall", "ratio", "cpu", "ratio", *rounds)
	for i, name := range names {
		w, c := median(samples[i], wallOf), median(samples[i], cpuOf)
		fmt.Printf("%-28s %12s %7.2fx %12s %7.2fx\n", name, w.Round(time.Microsecond), float64(w)/float64(base), c.Round(time.Microsecond), float64(c)/float64(baseCPU))
	}
	last := samples[len(samples)-1]
	b.ReportMetric(float64(median(last, wallOf))/float64(base), "wall-ratio")
	b.ReportMetric(float64(median(last, cpuOf))/float64(baseCPU), "cpu-ratio")
}

// BenchmarkPiPrint measures `padrun -- pi -p`, with its companion loaded
// and without (--no-companion), against bare `pi -p` on the fake model
// server: go test -run '^$' -bench PiPrint -benchtime 1x -rounds 10
func BenchmarkPiPrint(b *testing.B) {
	padrun := buildPadrun(b)
	bin := newestColumn().bin
	pi := filepath.Join(bin, "pi")
	if _, err := os.Stat(pi); err != nil {
		b.Fatalf("pi is not installed in %s: run ./test.sh first", bin)
	}
	work := b.TempDir()
	m, err := startFakeModel(work, filepath.Join(work, "model.log"))
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	agent := filepath.Join(work, "agent")
	os.MkdirAll(agent, 0o700)
	os.WriteFile(filepath.Join(agent, "models.json"), []byte(`{"providers":{"fake":{"baseUrl":"`+m.URL+`/v1","api":"openai-completions","apiKey":"k","compat":{"supportsDeveloperRole":false,"supportsReasoningEffort":false},"models":[{"id":"fake-model","contextWindow":128000,"maxTokens":4096}]}}}`), 0o600)
	os.WriteFile(filepath.Join(agent, "settings.json"), []byte(`{"defaultProvider":"fake","defaultModel":"fake-model","quietStartup":true,"enableInstallTelemetry":false,"retry":{"enabled":false}}`), 0o600)
	env := append(os.Environ(), "PATH="+bin+string(filepath.ListSeparator)+os.Getenv("PATH"), "HOME="+work, "PI_CODING_AGENT_DIR="+agent, "PI_OFFLINE=1", "PI_TELEMETRY=0",
		"PADRUN_REGISTRY_DIR="+filepath.Join(work, "reg"))
	for i := 0; i < b.N; i++ {
		s := alternate(b, env, work,
			[]string{pi, "-p", "--session", "s.jsonl", "hello"},
			[]string{padrun, "--no-companion", "--", pi, "-p", "--session", "s.jsonl", "hello"},
			[]string{padrun, "--", pi, "-p", "--session", "s.jsonl", "hello"})
		report(b, []string{"pi -p", "padrun --no-companion -- pi", "padrun -- pi -p (companion)"}, s)
	}
}

// floorSource is the Go floor: a bare program that flocks, writes a
// marker, fork/execs and waits, with none of padrun's checks.
const floorSource = `package main

import (
	"os"
	"syscall"
)

func main() {
	f := os.Args[1]
	fd, _ := syscall.Open(f+".live.lock", syscall.O_RDWR|syscall.O_CREAT|syscall.O_CLOEXEC, 0o600)
	syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
	os.WriteFile(f+".live.json.tmp", []byte("{\"v\":1,\"pid\":1}"), 0o600)
	os.Rename(f+".live.json.tmp", f+".live.json")
	pid, _ := syscall.ForkExec(os.Args[2], os.Args[2:], &syscall.ProcAttr{Files: []uintptr{0, 1, 2}})
	var ws syscall.WaitStatus
	syscall.Wait4(pid, &ws, 0, nil)
	os.Remove(f + ".live.json")
	os.Remove(f + ".live.lock")
}
`

// buildGo builds a one-file Go program, static.
func buildGo(b *testing.B, name, source string) string {
	dir := b.TempDir()
	os.WriteFile(filepath.Join(dir, "main.go"), []byte(source), 0o600)
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module "+name+"\n\ngo 1.26.8\n"), 0o600) // padrun's go line: the same GODEBUG defaults
	out := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-o", out, ".")
	cmd.Dir, cmd.Env, cmd.Stderr = dir, append(os.Environ(), "CGO_ENABLED=0"), os.Stderr
	if err := cmd.Run(); err != nil {
		b.Fatal(err)
	}
	return out
}

// BenchmarkOverhead measures padrun's own cost, `padrun --guard F --
// /bin/true`, for a new session file (F does not exist, as for every new
// session) and an existing one, against a direct /bin/true, `flock L
// /bin/true`, the Go floor (a bare Go program that flocks, writes a marker
// and fork/execs), that floor linked with padrun's libraries
// (testdata/libfloor) and registering the signals padrun handles too, and
// the previous binary (-previous, built from git, or -baseline) for each
// file: all in one alternating loop. --no-nested-guard's row is padrun
// without its folder of harness entries (docs/spec.md §7): the folder's
// cost is its difference from the new file's row.
// go test -run '^$' -bench Overhead -benchtime 1x -args -rounds=300
func BenchmarkOverhead(b *testing.B) {
	padrun, floor := buildPadrun(b), buildGo(b, "floor", floorSource)
	libfloor := buildHere(b, "libfloor", "./testdata/libfloor")
	previous := previousPadrun(b)
	work := b.TempDir()
	env := append(os.Environ(), "PADRUN_REGISTRY_DIR="+filepath.Join(work, "reg"))
	in := func(name string) string { return filepath.Join(work, name) }
	for _, f := range []string{"E", "PE"} { // the existing session files
		if err := os.WriteFile(in(f), []byte("{}\n"), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	type row struct {
		name string
		argv []string
	}
	rows := []row{
		{"/bin/true", []string{"/bin/true"}},
		{"flock L /bin/true", []string{"flock", in("L"), "/bin/true"}},
		{"Go floor", []string{floor, in("G"), "/bin/true"}},
		{"+ padrun's libraries", []string{libfloor, in("H"), "/bin/true"}},
		{"+ libraries and signals", []string{libfloor, "-signals", in("S"), "/bin/true"}},
		{"padrun --no-nested-guard", []string{padrun, "--no-nested-guard", "--guard", in("X"), "--", "/bin/true"}},
	}
	if previous != "" {
		rows = append(rows, row{"previous, new file", []string{previous, "--guard", in("PN"), "--", "/bin/true"}},
			row{"previous, existing file", []string{previous, "--guard", in("PE"), "--", "/bin/true"}})
	}
	// padrun's rows last: report's metrics are the last row's.
	rows = append(rows, row{"padrun, new file", []string{padrun, "--guard", in("N"), "--", "/bin/true"}},
		row{"padrun, existing file", []string{padrun, "--guard", in("E"), "--", "/bin/true"}})
	names, cmds := make([]string, len(rows)), make([][]string, len(rows))
	for i, r := range rows {
		names[i], cmds[i] = r.name, r.argv
	}
	wall := func(s [][]sample, name string) float64 { return float64(median(s[slices.Index(names, name)], wallOf)) }
	for i := 0; i < b.N; i++ {
		s := alternate(b, env, work, cmds...)
		report(b, names, s)
		flock, floor, libs := wall(s, "flock L /bin/true"), wall(s, "Go floor"), wall(s, "+ libraries and signals")
		fmt.Printf("libraries and signals: %.2fx flock(1), %.2fx the Go floor\n", libs/flock, libs/floor)
		for _, kind := range []string{"new file", "existing file"} {
			w := wall(s, "padrun, "+kind)
			line := fmt.Sprintf("padrun, %s: %.2fx flock(1), %.2fx the Go floor (goal 1.4), %.2fx the floor with libraries and signals", kind, w/flock, w/floor, w/libs)
			b.ReportMetric(w/floor, strings.ReplaceAll(kind, " file", "")+"/floor")
			if previous != "" {
				p := wall(s, "previous, "+kind)
				line += fmt.Sprintf(", %.2fx the previous binary (goal 1.0)", w/p)
				b.ReportMetric(w/p, strings.ReplaceAll(kind, " file", "")+"/previous")
			}
			fmt.Println(line)
		}
	}
}

// previous is the revision whose binary BenchmarkOverhead runs beside
// this one: by default the one before the rename follower (f27d41e), whose
// start-up the follower's cost is measured against.
var previous = flag.String("previous", "f27d41e", "a git revision whose padrun BenchmarkOverhead builds and runs beside this one; empty: none")

// previousPadrun is -baseline, or else -previous's padrun built from git,
// static like this one; "" with neither.
func previousPadrun(b *testing.B) string {
	b.Helper()
	if *baseline != "" {
		return *baseline
	}
	if *previous == "" {
		return ""
	}
	src := b.TempDir()
	tar := filepath.Join(b.TempDir(), "previous.tar")
	archive := exec.Command("git", "archive", "--output", tar, *previous)
	archive.Dir, archive.Stderr = "../..", os.Stderr // the module's root: from here git archives this folder alone
	if err := archive.Run(); err != nil {
		b.Fatalf("git archive %s: %v (set -previous to a revision of this clone, or to empty)", *previous, err)
	}
	untar := exec.Command("tar", "-xf", tar, "-C", src)
	untar.Stderr = os.Stderr
	if err := untar.Run(); err != nil {
		b.Fatal(err)
	}
	out := filepath.Join(b.TempDir(), "padrun-previous")
	build := exec.Command("go", "build", "-o", out, "./cmd/padrun")
	build.Dir, build.Env, build.Stderr = src, append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false"), os.Stderr
	if err := build.Run(); err != nil {
		b.Fatalf("go build of %s: %v", *previous, err)
	}
	return out
}

// BenchmarkPtyThroughput measures `padrun --pty -- cat FILE` against
// `script -qc "cat FILE" /dev/null` on a 64 MB file, output to /dev/null:
// go test -run '^$' -bench PtyThroughput -benchtime 1x -args -rounds=5
func BenchmarkPtyThroughput(b *testing.B) {
	padrun := buildPadrun(b)
	work := b.TempDir()
	big := filepath.Join(work, "big")
	f, err := os.Create(big)
	if err != nil {
		b.Fatal(err)
	}
	chunk := make([]byte, 1<<20)
	for i := range chunk {
		chunk[i] = byte('a' + i%26)
		if i%80 == 79 {
			chunk[i] = '\n'
		}
	}
	for i := 0; i < 64; i++ {
		f.Write(chunk)
	}
	f.Close()
	env := append(os.Environ(), "PADRUN_REGISTRY_DIR="+filepath.Join(work, "reg"))
	for i := 0; i < b.N; i++ {
		s := alternate(b, env, work,
			[]string{"script", "-qc", "cat " + big, "/dev/null"},
			[]string{padrun, "--pty", "--", "cat", big})
		report(b, []string{"script -qc 'cat 64MB'", "padrun --pty -- cat 64MB"}, s)
	}
}

// stampSource is a helper that appends "LABEL start NS", holds, then
// "LABEL end NS" to a file: a child whose start and end are on the clock.
const stampSource = `package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

func main() {
	now := time.Now().UnixNano()
	f, _ := os.OpenFile(os.Args[1], os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	fmt.Fprintf(f, "%s start %d\n", os.Args[2], now)
	ms, _ := strconv.Atoi(os.Args[3])
	time.Sleep(time.Duration(ms) * time.Millisecond)
	fmt.Fprintf(f, "%s end %d\n", os.Args[2], time.Now().UnixNano())
	f.Close()
}
`

func buildStamp(b *testing.B) string { return buildGo(b, "stamp", stampSource) }

func stamps(b *testing.B, path string) map[string]int64 {
	out := map[string]int64{}
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return out
	}
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var label, event string
		var ns int64
		fmt.Sscan(line, &label, &event, &ns)
		out[label+" "+event] = ns
	}
	return out
}

// BenchmarkHandover measures, under --wait, the time from one holder's
// child ending to the next child starting, against the same child's own
// start-up when run directly: go test -run '^$' -bench Handover -benchtime 1x -args -rounds=30
func BenchmarkHandover(b *testing.B) {
	padrun, stamp := buildPadrun(b), buildStamp(b)
	work := b.TempDir()
	env := append(os.Environ(), "PADRUN_REGISTRY_DIR="+filepath.Join(work, "reg"))
	var handover, direct []sample
	for r := 0; r < *rounds; r++ {
		log := filepath.Join(work, fmt.Sprintf("stamps.%d", r))
		file := filepath.Join(work, "s.jsonl")
		holder := exec.Command(padrun, "--guard", file, "--", stamp, log, "a", "30")
		holder.Env = env
		if err := holder.Start(); err != nil {
			b.Fatal(err)
		}
		for deadline := time.Now().Add(10 * time.Second); stamps(b, log)["a start"] == 0; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				b.Fatal("the holder never started")
			}
		}
		waiter := exec.Command(padrun, "--wait", "1m", "--guard", file, "--", stamp, log, "b", "0")
		waiter.Env = env
		if err := waiter.Start(); err != nil {
			b.Fatal(err)
		}
		holder.Wait()
		if err := waiter.Wait(); err != nil {
			b.Fatal(err)
		}
		s := stamps(b, log)
		handover = append(handover, sample{wall: time.Duration(s["b start"] - s["a end"])})

		// The same child started directly: its own start-up.
		start := time.Now().UnixNano()
		if err := exec.Command(stamp, log, "c", "0").Run(); err != nil {
			b.Fatal(err)
		}
		direct = append(direct, sample{wall: time.Duration(stamps(b, log)["c start"] - start)})
	}
	h, d := median(handover, wallOf), median(direct, wallOf)
	fmt.Printf("\nhandover under --wait (child end -> next child start): median %s; the child's own start-up: %s; padrun's share: %s (%d rounds)\n",
		h.Round(time.Microsecond), d.Round(time.Microsecond), (h - d).Round(time.Microsecond), *rounds)
	b.ReportMetric(float64(h.Microseconds())/1000, "handover-ms")
	b.ReportMetric(float64((h-d).Microseconds())/1000, "padrun-share-ms")
}

// BenchmarkRSS reads padrun's resident memory while its child runs:
// go test -run '^$' -bench RSS -benchtime 1x -args -rounds=10
func BenchmarkRSS(b *testing.B) {
	padrun := buildPadrun(b)
	work := b.TempDir()
	env := append(os.Environ(), "PADRUN_REGISTRY_DIR="+filepath.Join(work, "reg"))
	var rss []sample
	for r := 0; r < *rounds; r++ {
		file := filepath.Join(work, "s.jsonl")
		cmd := exec.Command(padrun, "--guard", file, "--", "sleep", "2")
		cmd.Env = env
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		// Wait until the child is recorded: padrun is past its start-up.
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			if m, err := os.ReadFile(file + ".live.json"); err == nil && strings.Contains(string(m), "childPid") {
				break
			}
			if time.Now().After(deadline) {
				b.Fatal("the child was never recorded")
			}
		}
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
		if err != nil {
			b.Fatal(err)
		}
		var kb int64
		for _, line := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				fmt.Sscan(v, &kb)
			}
		}
		rss = append(rss, sample{wall: time.Duration(kb)})
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}
	m := median(rss, wallOf)
	fmt.Printf("\npadrun's resident memory while its child runs: median %.1f MiB (%d rounds)\n", float64(m)/1024, *rounds)
	b.ReportMetric(float64(m)/1024, "rss-MiB")
}

// BenchmarkLsJSON times `padrun ls --json` over 1,000, 10,000 and 100,000
// records (half of them alive): go test -run '^$' -bench LsJSON -benchtime 1x -args -rounds=5
func BenchmarkLsJSON(b *testing.B) {
	padrun := buildPadrun(b)
	self := os.Getpid()
	token := func() string {
		s, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", self))
		return strings.Fields(string(s)[strings.LastIndex(string(s), ")")+2:])[19]
	}()
	var first time.Duration
	for _, n := range []int{1000, 10000, 100000} {
		dir := filepath.Join(b.TempDir(), "reg")
		os.MkdirAll(dir, 0o700)
		for i := 0; i < n; i++ {
			pid, start := 4000000+i, "1" // no such pid: dead
			if i%2 == 0 {
				pid, start = self, token
			}
			rec := fmt.Sprintf(`{"session_pid":%d,"session_pid_source":"self","session_pid_verified":true,"proc_start":"%s","agent":"a%d","pid":%d,"cwd":"/w","registered_at":"2026-11-30T08:00:00Z"}`, pid, start, i, pid)
			os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d.json", 4000000+i)), []byte(rec), 0o600)
		}
		env := append(os.Environ(), "PADRUN_REGISTRY_DIR="+dir)
		s := alternate(b, env, dir, []string{padrun, "ls", "--json"})
		m := median(s[0], wallOf)
		if n == 1000 {
			first = m
		}
		fmt.Printf("\npadrun ls --json over %6d records: median %s (%.1fx the 1,000-record time)\n", n, m.Round(time.Millisecond), float64(m)/float64(first))
		if n == 10000 {
			b.ReportMetric(float64(m.Microseconds())/1000, "ms-10k")
		}
	}
}

// BenchmarkHeartbeat measures what the heartbeat costs padrun: the CPU of a
// 5 s run beating every 10 ms (500 beats: one utimensat and one timer wake
// each) against the same run without a heartbeat, and from the difference
// the CPU per hour at intervals of 5 s, 10 s, 15 s (the default) and 30 s:
// go test -run '^$' -bench Heartbeat -benchtime 1x -args -rounds=5
func BenchmarkHeartbeat(b *testing.B) {
	padrun := buildPadrun(b)
	dir := b.TempDir()
	hold := 5 * time.Second
	run := func(every string) []string {
		return []string{padrun, "--heartbeat", every, "--guard", filepath.Join(dir, "s.jsonl"), "--", "sleep", fmt.Sprint(hold.Seconds())}
	}
	env := append(os.Environ(), "PADRUN_REGISTRY_DIR="+filepath.Join(dir, "reg"))
	samples := alternate(b, env, dir, run("0"), run("10ms"))
	off, on := median(samples[0], cpuOf), median(samples[1], cpuOf)
	beats := float64(hold / (10 * time.Millisecond))
	perBeat := time.Duration(float64(on-off) / beats)
	fmt.Printf("\npadrun CPU over a 5 s run: %s without a heartbeat, %s beating every 10 ms (medians of %d runs)\n",
		off.Round(time.Microsecond), on.Round(time.Microsecond), *rounds)
	fmt.Printf("one beat: %s of CPU\n", perBeat)
	for _, every := range []time.Duration{5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second} {
		perHour := time.Duration(float64(perBeat) * float64(time.Hour/every))
		fmt.Printf("--heartbeat %-4s %4d beats an hour: %s of CPU an hour (%.5f%% of one core)\n",
			every, time.Hour/every, perHour.Round(time.Microsecond), 100*perHour.Seconds()/3600)
	}
	b.ReportMetric(float64(perBeat.Nanoseconds()), "ns/beat")
}

// BenchmarkOutsideLook measures the start-up cost of the look for writers
// padrun did not start (docs/spec.md §5 rule 9): `padrun --guard F -- true`,
// which makes one pass over /proc, and `padrun -- true`, which guards
// nothing and makes none, first as the machine is, then with 500 more
// processes running (sleeping children). The pass alone is measured by
// wrapper's BenchmarkOutsideLook.
// go test -run '^$' -bench OutsideLook -benchtime 1x -args -rounds=100
func BenchmarkOutsideLook(b *testing.B) {
	padrun := buildPadrun(b)
	work := b.TempDir()
	env := append(os.Environ(), "PADRUN_REGISTRY_DIR="+filepath.Join(work, "reg"))
	cmds := [][]string{
		{"/bin/true"},
		{padrun, "--", "/bin/true"},
		{padrun, "--guard", filepath.Join(work, "F"), "--", "/bin/true"},
	}
	names := []string{"/bin/true", "padrun -- true (no look)", "padrun --guard F -- true"}
	for i := 0; i < b.N; i++ {
		s := alternate(b, env, work, cmds...)
		fmt.Println("\nas the machine is:")
		report(b, names, s)
		for range 500 {
			cmd := exec.Command("sleep", "600")
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			defer func() { cmd.Process.Kill(); cmd.Wait() }()
		}
		t := alternate(b, env, work, cmds...)
		fmt.Println("\nwith 500 more processes:")
		report(b, names, t)
		for j := 1; j < len(cmds); j++ {
			fmt.Printf("%s: %s more with 500 more processes (medians)\n", names[j], (median(t[j], wallOf) - median(s[j], wallOf)).Round(time.Microsecond))
		}
	}
}
