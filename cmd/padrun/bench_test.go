//go:build linux

package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

var rounds = flag.Int("rounds", 10, "runs of each command in the side-by-side benchmarks")

// buildPadrun builds the real binary, as users run it, once per benchmark.
func buildPadrun(b *testing.B) string {
	b.Helper()
	out := filepath.Join(b.TempDir(), "padrun")
	cmd := exec.Command("go", "build", "-o", out, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0") // static, as released: no dynamic loader at start
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
	for r := 0; r < *rounds; r++ {
		for i, argv := range cmds {
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Env, cmd.Dir = env, dir
			if null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0); err == nil {
				cmd.Stdin, cmd.Stdout = null, null
				defer null.Close()
			}
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

// BenchmarkPiPrint measures `padrun -- pi -p` against bare `pi -p` on the
// fake model server: go test -run '^$' -bench PiPrint -benchtime 1x -rounds 10
func BenchmarkPiPrint(b *testing.B) {
	padrun := buildPadrun(b)
	bin := harnessBin()
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
	env := append(os.Environ(), "HOME="+work, "PI_CODING_AGENT_DIR="+agent, "PI_OFFLINE=1", "PI_TELEMETRY=0",
		"PADRUN_REGISTRY_DIR="+filepath.Join(work, "reg"))
	for i := 0; i < b.N; i++ {
		s := alternate(b, env, work,
			[]string{pi, "-p", "--session", "s.jsonl", "hello"},
			[]string{padrun, "--", pi, "-p", "--session", "s.jsonl", "hello"})
		report(b, []string{"pi -p", "padrun -- pi -p"}, s)
	}
}

// BenchmarkOverhead measures padrun's own cost: `padrun --guard F --
// /bin/true` against `flock L /bin/true` and a direct /bin/true:
// go test -run '^$' -bench Overhead -benchtime 1x -rounds 200
func BenchmarkOverhead(b *testing.B) {
	padrun := buildPadrun(b)
	work := b.TempDir()
	env := append(os.Environ(), "PADRUN_REGISTRY_DIR="+filepath.Join(work, "reg"))
	for i := 0; i < b.N; i++ {
		s := alternate(b, env, work,
			[]string{"/bin/true"},
			[]string{"flock", filepath.Join(work, "L"), "/bin/true"},
			[]string{padrun, "--guard", filepath.Join(work, "F"), "--", "/bin/true"})
		report(b, []string{"/bin/true", "flock L /bin/true", "padrun --guard F -- true"}, s)
		fmt.Printf("padrun against flock(1): wall %.2fx\n", float64(median(s[2], wallOf))/float64(median(s[1], wallOf)))
	}
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
