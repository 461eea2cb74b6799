//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakePi makes dir/bin/pi, which pi's adapter reads the command line of
// (--session FILE: the file, its header's id) and which runs etcdchild
// with $ETCD_ARGS, and returns the PATH that finds it first.
func fakePi(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "pi"), []byte("#!/bin/sh\nexec etcdchild $ETCD_ARGS\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return "PATH=" + bin + ":" + os.Getenv("PATH")
}

// piHeader is a pi session's first line, naming id.
func piHeader(id string) string {
	return fmt.Sprintf(`{"type":"session","version":3,"id":%q,"timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}`, id)
}

// twoMachines are machines a and b that see their own copy of one session
// at one path, shared/s.jsonl; b's copy has a header naming hdr (when
// hdr is set), a's has none yet.
func twoMachines(t *testing.T, hdr string) (a, b *machine, session, dir string) {
	dir = t.TempDir()
	shared := filepath.Join(dir, "shared")
	if err := os.MkdirAll(shared, 0o700); err != nil {
		t.Fatal(err)
	}
	path := fakePi(t, dir)
	a, b = newMachine(t, dir, 0), newMachine(t, dir, 1)
	for _, m := range []*machine{a, b} {
		m.shared = shared
		m.env = append(m.env, path)
		if err := os.WriteFile(filepath.Join(m.dir, "work", "s.jsonl"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if hdr != "" {
		if err := os.WriteFile(filepath.Join(b.dir, "work", "s.jsonl"), []byte(piHeader(hdr)+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return a, b, filepath.Join(shared, "s.jsonl"), dir
}

// piRun is fake pi on m under --etcd, on session, with etcdchild's args.
func piRun(t *testing.T, c *cluster, m *machine, session string, flags []string, child ...string) *etcdRun {
	mm := *m
	mm.env = append(append([]string(nil), m.env...), "ETCD_ARGS="+strings.Join(child, " "))
	args := append([]string{"--etcd", c.endpoints(), "--etcd-ttl", testTTL, "--no-companion"}, flags...)
	return startRun(t, mm.padrunBare(append(args, "--", "pi", "--session", session)...))
}

// TestEtcd_SessionKeyOverHeader: two machines with --session-key SHARED,
// one on a session file without its header yet, one on its copy with a
// header: one key, so the second is refused (75). (With the header's id
// taking the key's place, both run.)
func TestEtcd_SessionKeyOverHeader(t *testing.T) {
	c := startCluster(t)
	a, b, session, dir := twoMachines(t, "hdr-over")
	log, release := filepath.Join(dir, "log"), filepath.Join(dir, "release")
	holder := piRun(t, c, a, session, []string{"--session-key", "SHARED"}, "-until", release, log, "a")
	waitUntil(t, 30*time.Second, "a runs", func() bool { return len(spans(t, log)) == 1 })
	other := piRun(t, c, b, session, []string{"--session-key", "SHARED"}, "-for", "2s", log, "b")
	if code := other.wait(t, 30*time.Second); code != exitRefused || !strings.Contains(other.stderr.String(), "held in etcd under /padrun/SHARED") {
		t.Errorf("the copy with a header: exit %d, want 75 held under /padrun/SHARED:\n%s", code, other.stderr)
	}
	os.WriteFile(release, nil, 0o600)
	if code := holder.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("a exited %d:\n%s", code, holder.stderr)
	}
	neverAtOnce(t, spans(t, log))
}

// TestEtcd_ExtraGuardKeyed: each --guard file has its key: a machine
// guarding notes.md beside its session is refused by another guarding the
// same notes.md (at the same path) beside another session. (With only
// the session's key in etcd, both run.)
func TestEtcd_ExtraGuardKeyed(t *testing.T) {
	c := startCluster(t)
	a, b, _, dir := twoMachines(t, "")
	notes := filepath.Join(a.shared, "notes.md")
	log, release := filepath.Join(dir, "log"), filepath.Join(dir, "release")
	holder := startRun(t, a.padrun(c, "--etcd-ttl", testTTL, "--session-key", "one", "--guard", notes, "--", "etcdchild", "-until", release, log, "a"))
	waitUntil(t, 30*time.Second, "a runs", func() bool { return len(spans(t, log)) == 1 })
	other := startRun(t, b.padrun(c, "--etcd-ttl", testTTL, "--session-key", "two", "--guard", notes, "--", "etcdchild", "-for", "2s", log, "b"))
	if code := other.wait(t, 30*time.Second); code != exitRefused || !strings.Contains(other.stderr.String(), "notes.md") {
		t.Errorf("notes.md on another machine: exit %d, want 75 naming it:\n%s", code, other.stderr)
	}
	os.WriteFile(release, nil, 0o600)
	if code := holder.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("a exited %d:\n%s", code, holder.stderr)
	}
	neverAtOnce(t, spans(t, log))
}

// TestEtcd_StatusKeysAsTheRun: a session held by its header's id on one
// machine; on another, status, unlock and a run on a copy of it (another
// path) derive the same key: held (75), kept, refused. (Status keyed by
// path says free.)
func TestEtcd_StatusKeysAsTheRun(t *testing.T) {
	c := startCluster(t)
	dir := t.TempDir()
	a := newMachine(t, dir, 0)
	a.env = append(a.env, fakePi(t, dir))
	session := filepath.Join(a.dir, "s.jsonl")
	if err := os.WriteFile(session, []byte(piHeader("hdr-status")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	log, release := filepath.Join(dir, "log"), filepath.Join(dir, "release")
	holder := piRun(t, c, a, session, nil, "-until", release, log, "a")
	waitUntil(t, 30*time.Second, "a runs", func() bool { return len(spans(t, log)) == 1 })
	copyOf := filepath.Join(dir, "copy.jsonl")
	if err := os.WriteFile(copyOf, []byte(piHeader("hdr-status")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	verb := func(args ...string) (int, string) {
		cmd := exec.Command("padrun", args...)
		cmd.Env = append(os.Environ(), "PADRUN_REGISTRY_DIR="+filepath.Join(dir, "reg"))
		out, _ := cmd.CombinedOutput()
		return cmd.ProcessState.ExitCode(), string(out)
	}
	if code, out := verb("status", "--etcd", c.endpoints(), copyOf); code != exitRefused || !strings.Contains(out, "/padrun/hdr-status held by padrun pid") {
		t.Errorf("status on the copy: exit %d, want 75 showing /padrun/hdr-status held:\n%s", code, out)
	}
	if code, out := verb("unlock", "--etcd", c.endpoints(), copyOf); code != exitRefused || !strings.Contains(out, "kept /padrun/hdr-status") {
		t.Errorf("unlock on the copy: exit %d, want 75 keeping /padrun/hdr-status:\n%s", code, out)
	}
	if code, out := verb("--etcd", c.endpoints(), "--guard", copyOf, "--", "etcdchild", "-for", "0s", log, "b"); code != exitRefused {
		t.Errorf("a run on the copy: exit %d, want 75:\n%s", code, out)
	}
	os.WriteFile(release, nil, 0o600)
	if code := holder.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("a exited %d:\n%s", code, holder.stderr)
	}
	if ss := spans(t, log); len(ss) != 1 {
		t.Errorf("want one child run, got %v", ss)
	}
}

// TestEtcd_LearnedID: a machine on a session file without its header,
// keyed by its path, while another holds the session by its header's id
// (its copy has one): once the first's harness writes that header, the id
// is held elsewhere: a lost hold, the child stopped, 76. (Without the id
// learned into etcd, both run on.)
func TestEtcd_LearnedID(t *testing.T) {
	c := startCluster(t)
	a, b, session, dir := twoMachines(t, "hdr-learn")
	log, release, write := filepath.Join(dir, "log"), filepath.Join(dir, "release"), filepath.Join(dir, "write")
	first := piRun(t, c, a, session, nil, "-until", release, "-write", session, "-line", piHeader("hdr-learn"), "-when", write, log, "a")
	waitUntil(t, 30*time.Second, "a runs", func() bool { return len(spans(t, log)) == 1 })
	holder := piRun(t, c, b, session, nil, "-until", release, log, "b")
	waitUntil(t, 30*time.Second, "b runs", func() bool { return len(spans(t, log)) == 2 })
	wroteAt := time.Now()
	os.WriteFile(write, nil, 0o600)
	if code := first.wait(t, 30*time.Second); code != exitLost || !strings.Contains(first.stderr.String(), "hdr-learn, written by the harness after the start, is held in etcd by another session") {
		t.Errorf("a, whose harness wrote the header b holds: exit %d, want 76 saying so:\n%s", code, first.stderr)
	}
	t.Logf("a was stopped %s after its header was asked for", time.Since(wroteAt).Round(time.Millisecond))
	os.WriteFile(release, nil, 0o600)
	if code := holder.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("b exited %d:\n%s", code, holder.stderr)
	}
}

// TestEtcd_PrefixNormalised: --etcd-prefix /pfx and /pfx/ are one
// prefix: the second machine is refused. (Unnormalised, /pfxk and /pfx/k
// both run.)
func TestEtcd_PrefixNormalised(t *testing.T) {
	c := startCluster(t)
	dir := t.TempDir()
	a, b := newMachine(t, dir, 0), newMachine(t, dir, 1)
	log, release := filepath.Join(dir, "log"), filepath.Join(dir, "release")
	holder := startRun(t, a.padrun(c, "--etcd-prefix", "/pfx", "--session-key", "k", "--", "etcdchild", "-until", release, log, "a"))
	waitUntil(t, 30*time.Second, "a runs", func() bool { return len(spans(t, log)) == 1 })
	other := startRun(t, b.padrun(c, "--etcd-prefix", "/pfx//", "--session-key", "k", "--", "etcdchild", "-for", "0s", log, "b"))
	if code := other.wait(t, 30*time.Second); code != exitRefused || !strings.Contains(other.stderr.String(), "held in etcd under /pfx/k") {
		t.Errorf("--etcd-prefix /pfx// beside /pfx: exit %d, want 75 under /pfx/k:\n%s", code, other.stderr)
	}
	os.WriteFile(release, nil, 0o600)
	if code := holder.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("a exited %d:\n%s", code, holder.stderr)
	}
}
