//go:build linux

package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/padrun/padrun/wrapper/harness"
)

// BenchmarkHarnessPrint measures `padrun -- HARNESS -p` against the bare
// harness, each harness of the newest column against the fake model
// server, the two run alternately: the medians, their ratio, and the bare
// harness's own spread from run to run (its 25th to 75th percentile), which
// the ratio is to be read against. pi and claude are for reference.
// A harness whose companion is a settings file of hooks (gemini, qwen), or
// is loaded by its command line (pi's and omp's -e extension, claude's and
// droid's --settings hooks), is also run bare with a companion that does
// nothing (hooks running true, an extension with no handler): what the
// harness's own machinery for it costs, the floor of any companion, beside
// what padrun adds to it. Each wrapped run is checked once to have loaded
// its companion. -bench-column picks the column (newest by default).
// go test -run '^$' -bench HarnessPrint -benchtime 1x -args -rounds 10 -bench-column oldest
func BenchmarkHarnessPrint(b *testing.B) {
	padrun := buildPadrun(b)
	c := benchColumn(b)
	for _, h := range []struct {
		name string
		argv []string
	}{
		{"gemini", []string{"gemini", "-p", "hello"}},
		{"qwen", []string{"qwen", "-p", "hello"}},
		{"copilot", []string{"copilot", "-p", "hello"}},
		{"opencode", []string{"opencode", "run", "hello"}},
		{"kilo", []string{"kilo", "run", "hello"}},
		{"omp", []string{"omp", "-p", "hello"}},
		{"pi", []string{"pi", "-p", "hello"}},
		{"claude", []string{"claude", "-p", "hello"}},
		{"droid", []string{"droid", "exec", "hello"}},
		// cline's local backend in the data folder that holds its provider
		// (not the hub daemon, which would outlive the run).
		{"cline", []string{"cline", "--data-dir", "{home}/.cline/data", "say hello"}},
	} {
		b.Run(h.name, func(b *testing.B) {
			if _, err := os.Stat(filepath.Join(c.bin, h.name)); err != nil {
				b.Skipf("%s is not installed in %s: run ./test.sh first", h.name, c.bin)
			}
			work := b.TempDir()
			m, err := startFakeModel(work, filepath.Join(work, "model.log"))
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			home := filepath.Join(work, "home")
			vars, err := fakeModelEnv(m, work, home, c.dir())
			if err != nil {
				b.Fatal(err)
			}
			env := os.Environ() // exec keeps the last of a repeated name
			for k, v := range vars {
				env = append(env, k+"="+v)
			}
			env = append(env, "HOME="+home, "PADRUN_REGISTRY_DIR="+filepath.Join(work, "reg"),
				"PATH="+c.bin+string(filepath.ListSeparator)+os.Getenv("PATH"))
			rt, rtOK := benchRuntimeDir(b)
			if rtOK {
				env = append(env, "XDG_RUNTIME_DIR="+rt)
			}
			bare := []string{filepath.Join(c.bin, h.name)}
			for _, a := range h.argv[1:] {
				bare = append(bare, strings.ReplaceAll(a, "{home}", home))
			}
			wrapped := append([]string{padrun, "--"}, bare...)
			cmds := [][]string{bare, wrapped}
			a, _ := harness.Lookup(h.name)
			if a.Companion != nil && a.Companion.SettingsEnv != "" && rtOK {
				name, body := a.Companion.Settings("true")
				f := filepath.Join(rt, "bench-"+h.name+"-hooks.json")
				if err := os.WriteFile(f, body, 0o600); err != nil {
					b.Fatal(err)
				}
				defer os.Remove(f)
				cmds = append(cmds, append([]string{"env", name + "=" + f}, bare...))
			} else if a.Companion != nil {
				noop := filepath.Join(work, "noop-companion.js")
				if err := os.WriteFile(noop, []byte("export default function () {}\n"), 0o600); err != nil {
					b.Fatal(err)
				}
				if floor, ok := a.Companion.Argv(bare, harness.Load{Script: noop, Hook: "true"}); ok && !slices.Equal(floor, bare) {
					cmds = append(cmds, floor)
				}
			}
			// One run of each first: the harness's first start in a fresh
			// home (caches, a database to create) is not what users wait on.
			// The wrapped one logs whether its companion loaded.
			log := filepath.Join(work, "first.log")
			for i, argv := range cmds {
				if i == 1 {
					argv = append([]string{padrun, "--log-level", "debug", "--log-file", log, "--"}, bare...)
				}
				cmd := exec.Command(argv[0], argv[1:]...)
				cmd.Env, cmd.Dir = env, work
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%v: %v\n%s", argv, err, out)
				}
			}
			companion := "no companion"
			if a.Companion != nil {
				companion = "companion not loaded"
				if l, _ := os.ReadFile(log); bytes.Contains(l, []byte("the companion greeted padrun")) {
					companion = "companion loaded"
				}
			}
			for i := 0; i < b.N; i++ {
				s := alternate(b, env, work, cmds...)
				reportSpread(b, h.name+" ("+companion+")", s[0], s[1])
				if len(s) > 2 {
					reportHooked(b, s[0], s[2], s[1])
				}
			}
		})
	}
}

// reportSpread prints and reports the medians of the bare and the wrapped
// runs, their ratio, and the 25th and 75th percentiles of each.
func reportSpread(b *testing.B, name string, bare, wrapped []sample) {
	b.Helper()
	mb, mw := median(bare, wallOf), median(wrapped, wallOf)
	b25, b75 := percentile(bare, 0.25), percentile(bare, 0.75)
	w25, w75 := percentile(wrapped, 0.25), percentile(wrapped, 0.75)
	fmt.Printf("%-9s bare %8s (p25-p75 %s-%s, %4.1f%%)  padrun %8s (p25-p75 %s-%s)  ratio %.3f  (%d alternated runs)\n",
		name, mb.Round(time.Millisecond), b25.Round(time.Millisecond), b75.Round(time.Millisecond),
		100*float64(b75-b25)/float64(mb), mw.Round(time.Millisecond), w25.Round(time.Millisecond), w75.Round(time.Millisecond),
		float64(mw)/float64(mb), len(bare))
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(mb), "bare-ms")
	b.ReportMetric(ms(mw), "padrun-ms")
	b.ReportMetric(float64(mw)/float64(mb), "wall-ratio")
	b.ReportMetric(ms(b75-b25), "bare-p25-p75-ms")
	b.ReportMetric(ms(w75-w25), "padrun-p25-p75-ms")
	b.ReportMetric(ms(mw-mb), "padrun-minus-bare-ms")
}

// reportHooked prints the bare harness with a companion that does nothing
// (hooks running true, an empty extension) against the bare one and the
// wrapped one against it: the harness's own cost of loading a companion,
// and padrun's beside it. CPU is of the whole process tree.
func reportHooked(b *testing.B, bare, hooked, wrapped []sample) {
	b.Helper()
	mb, mh, mw := median(bare, wallOf), median(hooked, wallOf), median(wrapped, wallOf)
	cb, ch, cw := median(bare, cpuOf), median(hooked, cpuOf), median(wrapped, cpuOf)
	fmt.Printf("%-9s no-op companion %8s (p25-p75 %s-%s)  hooked/bare %.3f  padrun/hooked %.3f  cpu bare %s hooked %s padrun %s\n",
		"", mh.Round(time.Millisecond), percentile(hooked, 0.25).Round(time.Millisecond), percentile(hooked, 0.75).Round(time.Millisecond),
		float64(mh)/float64(mb), float64(mw)/float64(mh), cb.Round(time.Millisecond), ch.Round(time.Millisecond), cw.Round(time.Millisecond))
	b.ReportMetric(float64(mh)/float64(mb), "hooked-bare-ratio")
	b.ReportMetric(float64(mw)/float64(mh), "padrun-hooked-ratio")
}

// benchColumnName is the column BenchmarkHarnessPrint runs.
var benchColumnName = flag.String("bench-column", "newest", "the column of harnesses BenchmarkHarnessPrint runs: oldest or newest")

// benchColumn is -bench-column's column.
func benchColumn(b *testing.B) column {
	for _, c := range harnessColumns() {
		if c.name == *benchColumnName {
			return c
		}
	}
	b.Fatalf("-bench-column %q: no such column installed (run ./test.sh --install)", *benchColumnName)
	return column{}
}

// benchRuntimeDir is the XDG_RUNTIME_DIR the wrapped runs get: gemini
// 0.61 reads padrun's settings file only from folders that root owns all
// the way up, which the test's temp folder (under /tmp) is not, and
// /run/user/0 is. Other users have no such folder: false.
func benchRuntimeDir(b *testing.B) (string, bool) {
	if os.Getuid() != 0 {
		return "", false
	}
	const rt = "/run/user/0"
	if err := os.MkdirAll(rt, 0o700); err != nil {
		b.Logf("no %s (%v): gemini 0.61 runs without its companion", rt, err)
		return "", false
	}
	return rt, true
}

// percentile is the wall time at fraction p of the sorted samples (the
// nearest rank).
func percentile(s []sample, p float64) time.Duration {
	d := make([]time.Duration, len(s))
	for i, x := range s {
		d[i] = x.wall
	}
	slices.Sort(d)
	return d[int(p*float64(len(d)-1)+0.5)]
}
