//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// etcdcluster starts a three-member etcd cluster for the script, data in
// $WORK/etcd, and sets $ETCD to its endpoints; it ends with the script.
func cmdEtcdCluster(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: etcdcluster")
	}
	if os.Geteuid() != 0 {
		ts.Fatalf("etcdcluster needs root, for the machines' namespaces")
	}
	if err := missing("etcd", "etcdctl", "unshare"); err != nil {
		ts.Fatalf("%v", err)
	}
	var c *cluster
	var stop func()
	var err error
	for try := range 3 {
		dir := filepath.Join(ts.Getenv("WORK"), fmt.Sprintf("etcd%d", try))
		ts.Check(os.MkdirAll(dir, 0o700))
		if c, stop, err = launchCluster(dir, scriptPort(ts)); err == nil {
			break
		}
	}
	ts.Check(err)
	ts.Defer(stop)
	setenv(ts, "ETCD", c.endpoints())
}

func scriptPort(ts *testscript.TestScript) func() int {
	return func() int {
		p, err := freePortErr()
		ts.Check(err)
		return p
	}
}

// etcdmachine NAME DIR makes machine NAME: $WORK/bin/on-NAME runs a
// command there, in its own mount and pid namespaces, with its own machine
// id, registry and runtime folder, and its own copy of $WORK/DIR
// ($WORK/NAME/DIR bind-mounted over it), as runners restored from one
// cache each have their copy of the sessions at one path.
func cmdEtcdMachine(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: etcdmachine NAME DIR")
	}
	work, name, dir := ts.Getenv("WORK"), args[0], args[1]
	m := filepath.Join(work, name)
	for _, d := range []string{filepath.Join(m, dir), filepath.Join(m, "reg"), filepath.Join(m, "run"), filepath.Join(work, dir), filepath.Join(work, "bin")} {
		ts.Check(os.MkdirAll(d, 0o700))
	}
	id := fmt.Sprintf("%x", []byte(name))
	id += strings.Repeat("0", 32-len(id)) + "\n"
	ts.Check(os.WriteFile(filepath.Join(m, "machine-id"), []byte(id), 0o600))
	script := fmt.Sprintf(`#!/bin/sh
export PADRUN_REGISTRY_DIR=%[1]s/reg XDG_RUNTIME_DIR=%[1]s/run
exec unshare --mount --pid --fork --mount-proc --kill-child sh -c 'mount --bind %[1]s/machine-id /etc/machine-id && mount --bind %[1]s/%[2]s %[3]s/%[2]s && exec "$@"' sh "$@"
`, m, dir, work)
	ts.Check(os.WriteFile(filepath.Join(work, "bin", "on-"+name), []byte(script), 0o755))
	if p := ts.Getenv("PATH"); !strings.HasPrefix(p, filepath.Join(work, "bin")+":") {
		setenv(ts, "PATH", filepath.Join(work, "bin")+":"+p)
	}
}

// basename VAR PATH sets VAR to PATH's last element.
func cmdBasename(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: basename VAR PATH")
	}
	setenv(ts, args[0], filepath.Base(args[1]))
}
