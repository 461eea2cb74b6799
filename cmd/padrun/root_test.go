//go:build linux

package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"
)

// TestAsRoot runs what needs root: other pid namespaces, other machines
// simulated with bind mounts over /etc/machine-id and the boot id, full and
// read-only filesystems, and holders of another user. CI runs as root.
func TestAsRoot(t *testing.T) {
	requireRoot(t, "mount filesystems and make namespaces")
	testscript.Run(t, params("testdata/root"))
}

// sigproc SIG NAME sends SIG to a process started with start.
func cmdSigproc(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: sigproc SIG NAME")
	}
	v, ok := procs.Load(ts.Getenv("WORK") + "\x00" + args[1])
	if !ok {
		ts.Fatalf("sigproc: %s was not started", args[1])
	}
	ts.Check(unix.Kill(v.(*proc).cmd.Process.Pid, sigByName(args[0])))
}

// installbin DIR copies padrun and fakeharness into DIR, 0755, for other
// users to run; DIR is made 0755 and a DIR/shared folder 1777.
func cmdInstallbin(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: installbin DIR")
	}
	dir := args[0]
	ts.Check(os.MkdirAll(filepath.Join(dir, "shared"), 0o755))
	ts.Check(os.Chmod(dir, 0o755))
	ts.Check(os.Chmod(filepath.Join(dir, "shared"), 0o777|os.ModeSticky)) // os.FileMode has its own sticky bit: 0o1000 is not it
	self, err := os.Executable()
	ts.Check(err)
	for _, name := range []string{"padrun", "fakeharness"} {
		src, err := os.Open(self)
		ts.Check(err)
		dst, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
		ts.Check(err)
		_, err = io.Copy(dst, src)
		ts.Check(err)
		src.Close()
		ts.Check(dst.Close())
	}
	ts.Defer(func() { os.RemoveAll(dir) })
}
