package wrapper

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/user"
	"strconv"
	"strings"
	"time"

	"github.com/padrun/padrun/marker"
	"github.com/padrun/padrun/marker/ident"
	"github.com/padrun/padrun/wrapper/harness"
)

// procSource is a process table: /proc on Linux, a fake one in tests.
type procSource interface {
	// pids lists the processes.
	pids() ([]int, error)
	// exe reads the path of the executable pid runs into buf;
	// os.ErrNotExist (ENOENT) for a kernel thread or a process gone.
	exe(pid int, buf []byte) ([]byte, error)
	// cmdline reads pid's command line, NUL-separated, into buf (at most
	// len(buf) bytes; more when whole is set).
	cmdline(pid int, buf []byte, whole bool) ([]byte, error)
	// cwd, environ and owner are read only for a harness's process.
	cwd(pid int) (string, error)
	environ(pid int) ([]byte, error)
	owner(pid int) (uid int, ok bool)
	// skip reports whether pid is of the run's own tree.
	skip(pid int) bool
	started(pid int) (time.Time, bool)
}

// matchProcs is the pass over a process table: every process whose
// argv[0] may be a harness's is read by its adapter, in its own folder and
// environment. Another user's process whose folder or environment cannot be
// read is kept as foreign. buf is the pass's one buffer.
func matchProcs(src procSource, buf []byte) ([]outsider, error) {
	pids, err := src.pids()
	if err != nil {
		return nil, err
	}
	var out []outsider
	for _, pid := range pids {
		exe, err := src.exe(pid, buf)
		if errors.Is(err, os.ErrNotExist) || err == nil && !harness.MayBeHarnessExe(string(exe)) {
			continue // another user's (EACCES) is read on
		}
		b, err := src.cmdline(pid, buf, false)
		if err != nil || len(b) == 0 {
			continue // gone, or a kernel thread
		}
		argv0, _, cut := bytes.Cut(b, []byte{0})
		if !cut && len(b) == len(buf) { // argv[0] longer than buf
			if b, err = src.cmdline(pid, buf, true); err != nil {
				continue
			}
			argv0, _, _ = bytes.Cut(b, []byte{0})
		}
		if !harness.MayBeHarness(string(argv0)) {
			continue
		}
		if b, err = src.cmdline(pid, buf, true); err != nil {
			continue
		}
		args := argv(b)
		if _, ok := harness.Identify(args); !ok || src.skip(pid) {
			continue
		}
		if w, ok := readProc(src, pid, args); ok {
			out = append(out, w)
		}
	}
	return out, nil
}

// readProc reads one harness process: what its adapter says it writes.
func readProc(src procSource, pid int, args []string) (outsider, bool) {
	cwd, cerr := src.cwd(pid)
	env, eerr := src.environ(pid)
	var w outsider
	if cerr != nil || eerr != nil {
		uid, ok := src.owner(pid)
		if !ok || uid == os.Geteuid() {
			return outsider{}, false // gone meanwhile, or ours and unreadable: nothing to say
		}
		o, ok := harness.ReadOutside(args, harness.Env{Cwd: "/"})
		if !ok {
			return outsider{}, false
		}
		w = outsider{harness: o.Harness, command: o.Command, foreign: userName(uid), uid: uid}
	} else {
		vars := environ(env)
		getenv := func(k string) string { return vars[k] }
		o, ok := harness.ReadOutside(args, harness.Env{Getenv: getenv, Cwd: strings.TrimSuffix(cwd, " (deleted)"), Home: getenv("HOME")})
		if !ok {
			return outsider{}, false
		}
		w = outsider{harness: o.Harness, command: o.Command}
		if pid, err := strconv.Atoi(getenv("PAD_SESSION_PID")); err == nil && pid > 0 && marker.Local(pid, "").Verdict != ident.Dead {
			w.session = pid
		}
		w.files = canonical(o.Files)
		w.folders = canonical(o.Folders)
	}
	w.pid = pid
	if t, ok := src.started(pid); ok {
		w.since = t
	}
	return w, true
}

// argv splits a NUL-separated command line; a final NUL ends the last
// argument.
func argv(b []byte) []string {
	b = bytes.TrimSuffix(b, []byte{0})
	return strings.Split(string(b), "\x00")
}

// environ reads a NUL-separated environment; the first of a name counts.
func environ(b []byte) map[string]string {
	vars := map[string]string{}
	for _, kv := range argv(b) {
		if k, v, ok := strings.Cut(kv, "="); ok {
			if _, seen := vars[k]; !seen {
				vars[k] = v
			}
		}
	}
	return vars
}

// canonical is paths by their canonical names; one that cannot be resolved
// is kept as it is.
func canonical(paths []string) []string {
	var out []string
	for _, p := range paths {
		if c, err := Resolve(p); err == nil {
			p = c
		}
		out = append(out, p)
	}
	return out
}

// userName names uid for people: "user NAME (uid N)".
func userName(uid int) string {
	name := strconv.Itoa(uid)
	if u, err := user.LookupId(name); err == nil {
		name = u.Username
	}
	return fmt.Sprintf("user %s (uid %d)", name, uid)
}
