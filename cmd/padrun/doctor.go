package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/padrun/padrun/wrapper"
)

// exitUnguarded is doctor's status when something it found is not guarded.
const exitUnguarded = 1

// doctorReport is padrun doctor's finding, as --json prints it.
type doctorReport struct {
	wrapper.Checkup
	Etcd *wrapper.Check `json:"etcd,omitempty"` // nil without --etcd or $PADRUN_ETCD
}

func setupDoctor(fs *pflag.FlagSet) func([]string, io.Writer, io.Writer) error {
	asJSON := fs.Bool("json", false, "print JSON")
	verbose := fs.BoolP("verbose", "v", false, "say why each mode that is not guarded is not")
	var ef etcdFlags
	ef.addVerbFlags(fs)
	return func(_ []string, stdout, _ io.Writer) error {
		cwd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("doctor: %w", err)
		}
		r := doctorReport{Checkup: wrapper.Doctor(wrapper.ReadEnv(), cwd)}
		if c, err := ef.client(); err != nil {
			return err
		} else if c != nil {
			r.Etcd = etcdCheck(c.Prefix(), func(ctx context.Context) error { _, err := c.List(ctx, 1); return err })
		}
		if *asJSON {
			writeJSON(stdout, r)
		} else {
			printDoctor(newShownWriter(stdout), r, *verbose)
		}
		if !r.Guarded() || (r.Etcd != nil && !r.Etcd.OK) {
			return exitStatus(exitUnguarded)
		}
		return nil
	}
}

// etcdCheck asks etcd for one key under prefix, within a few seconds.
func etcdCheck(prefix string, list func(context.Context) error) *wrapper.Check {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := list(ctx); err != nil {
		return &wrapper.Check{What: "unreachable: " + err.Error()}
	}
	return &wrapper.Check{OK: true, What: "answers, keys under " + prefix}
}

// printDoctor writes the report for people, one screen: the machine's
// checks, then each harness padrun knows, found or not.
func printDoctor(w io.Writer, r doctorReport, verbose bool) {
	mark := func(ok bool) string {
		if ok {
			return "ok  "
		}
		return "NO  "
	}
	fmt.Fprintf(w, "padrun %s on %s/%s, uid %d\n", wrapper.Version, runtime.GOOS, runtime.GOARCH, os.Getuid())
	fmt.Fprintf(w, "%s registry  %s\n", mark(r.Registry.OK), r.Registry.What)
	fmt.Fprintf(w, "%s cgroups   %s\n", mark(r.Cgroups.OK), r.Cgroups.What)
	if r.Etcd != nil {
		fmt.Fprintf(w, "%s etcd      %s\n", mark(r.Etcd.OK), r.Etcd.What)
	}
	for _, h := range r.Harnesses {
		if !h.Found() {
			fmt.Fprintf(w, "-    %-9s not on PATH\n", h.Name)
			continue
		}
		fmt.Fprintf(w, "%s %-9s %s %s: %s\n", mark(h.Guarded()), h.Name, dash(h.Version), h.Path, h.Release.What)
		if h.Companion != nil {
			fmt.Fprintf(w, "       companion: %s\n", h.Companion.What)
		}
		var guarded, unknown []string
		for _, m := range h.Modes {
			switch {
			case m.Guarded:
				guarded = append(guarded, m.Mode)
			case verbose:
				unknown = append(unknown, m.Mode+" ("+m.Why+")")
			default:
				unknown = append(unknown, m.Mode)
			}
		}
		if len(guarded) > 0 {
			fmt.Fprintf(w, "       guarded: %s\n", strings.Join(guarded, ", "))
		}
		if len(unknown) > 0 {
			fmt.Fprintf(w, "       unknown: %s\n", strings.Join(unknown, "; "))
		}
	}
	if !r.Guarded() {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "NO: not everything found is guarded (padrun doctor -v says why; docs/harnesses.md has the table)")
	}
}
