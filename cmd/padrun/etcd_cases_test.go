//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// testTTL is the lease's TTL in the tests: short, so that a lost hold is
// fenced within seconds.
const testTTL = "3s"

// electionTTL is the TTL where a leader is killed: an election takes a
// second or two, which a lease must outlast.
const electionTTL = "8s"

// TestEtcd_OneHolderUnderRaces: padruns on three machines race for one
// key; in every round exactly one runs its child, the others are refused
// (75), naming the holder's machine and pid. (With the key put without
// its create-revision compare, three win a round and this fails.)
func TestEtcd_OneHolderUnderRaces(t *testing.T) {
	c := startCluster(t)
	dir := t.TempDir()
	machines := []*machine{newMachine(t, dir, 0), newMachine(t, dir, 1), newMachine(t, dir, 2)}
	log := filepath.Join(dir, "log")
	t.Logf("%d rounds of 9 padruns on 3 machines", *etcdRounds)
	for round := range *etcdRounds {
		release := filepath.Join(dir, fmt.Sprintf("release%d", round))
		var runs []*etcdRun
		for i := range 9 {
			m := machines[i%3]
			id := fmt.Sprintf("r%d-%d", round, i)
			runs = append(runs, startRun(t, m.padrun(c, "--etcd-ttl", testTTL, "--session-key", fmt.Sprintf("race%d", round), "--",
				"etcdchild", "-until", release, log, id)))
		}
		waitUntil(t, time.Minute, "all but one refused", func() bool {
			n := 0
			for _, r := range runs {
				if r.ended() {
					n++
				}
			}
			return n >= len(runs)-1
		})
		var winner *etcdRun
		inEtcd := 0
		for _, r := range runs {
			if !r.ended() {
				if winner != nil {
					t.Fatalf("round %d: two winners", round)
				}
				winner = r
				continue
			}
			if code := r.wait(t, time.Second); code != exitRefused {
				t.Fatalf("round %d: a loser exited %d, not 75:\n%s", round, code, r.stderr)
			}
			if strings.Contains(r.stderr.String(), "held in etcd under /padrun/race") {
				inEtcd++
				if !regexp.MustCompile(`holder: padrun pid \d+.* on machine abc0000[0-2]`).MatchString(r.stderr.String()) {
					t.Fatalf("round %d: the refusal names no machine and pid:\n%s", round, r.stderr)
				}
			}
		}
		// On each machine but the winner's, the first to take the local
		// hold is refused by etcd; the others there may be refused locally.
		if inEtcd < 2 {
			t.Fatalf("round %d: %d refusals came from etcd, want at least 2", round, inEtcd)
		}
		if winner == nil {
			t.Fatalf("round %d: no winner:\n%s", round, runs[0].stderr)
		}
		os.WriteFile(release, nil, 0o600)
		if code := winner.wait(t, 30*time.Second); code != 0 {
			t.Fatalf("round %d: the winner exited %d:\n%s", round, code, winner.stderr)
		}
		var ids []string
		for _, s := range spans(t, log) {
			if strings.HasPrefix(s.id, fmt.Sprintf("r%d-", round)) {
				ids = append(ids, s.id)
			}
		}
		if len(ids) != 1 {
			t.Fatalf("round %d: %d children ran: %v", round, len(ids), ids)
		}
		if _, held := c.key("/padrun/race" + fmt.Sprint(round)); held {
			t.Fatalf("round %d: the winner left its key behind", round)
		}
	}
	neverAtOnce(t, spans(t, log))
}

// TestEtcd_WaitQueues: under --wait another machine's padrun watches the
// key and runs as soon as the holder ends, never before.
func TestEtcd_WaitQueues(t *testing.T) {
	c := startCluster(t)
	dir := t.TempDir()
	a, b := newMachine(t, dir, 0), newMachine(t, dir, 1)
	log, release := filepath.Join(dir, "log"), filepath.Join(dir, "release")
	holder := startRun(t, a.padrun(c, "--etcd-ttl", testTTL, "--session-key", "q", "--", "etcdchild", "-until", release, log, "a"))
	waitUntil(t, 30*time.Second, "the holder runs", func() bool { return len(spans(t, log)) == 1 })
	waiter := startRun(t, b.padrun(c, "--etcd-ttl", testTTL, "--session-key", "q", "--wait", "1m", "--", "etcdchild", "-for", "50ms", log, "b"))
	waitUntil(t, 30*time.Second, "the waiter says it waits", func() bool { return strings.Contains(waiter.stderr.String(), "waiting up to 1m0s") })
	if waiter.ended() {
		t.Fatalf("the waiter ended while the key was held:\n%s", waiter.stderr)
	}
	os.WriteFile(release, nil, 0o600)
	if code := holder.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("holder exited %d:\n%s", code, holder.stderr)
	}
	if code := waiter.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("waiter exited %d:\n%s", code, waiter.stderr)
	}
	ss := spans(t, log)
	if len(ss) != 2 {
		t.Fatalf("want both children in the log, got %v", ss)
	}
	neverAtOnce(t, ss)
}

// TestEtcd_MembersKilled: a follower killed, then the leader: while two of
// three members answer, a running session keeps its lease (it is not
// fenced) and a new run still works, the killed member named first.
// (Asking only the first member, this fails with 125.)
func TestEtcd_MembersKilled(t *testing.T) {
	c := startCluster(t)
	dir := t.TempDir()
	a, b := newMachine(t, dir, 0), newMachine(t, dir, 1)
	log, release := filepath.Join(dir, "log"), filepath.Join(dir, "release")
	holder := startRun(t, a.padrun(c, "--etcd-ttl", electionTTL, "--session-key", "k", "--", "etcdchild", "-until", release, log, "a"))
	waitUntil(t, 30*time.Second, "the holder runs", func() bool { return len(spans(t, log)) == 1 })
	leader := c.leader()
	var follower *member
	for _, m := range c.members {
		if m != leader {
			follower = m
			break
		}
	}
	c.kill(follower)
	// Two TTLs with a member down: the holder renews through the others.
	r := startRun(t, b.padrun(c, "--etcd-ttl", electionTTL, "--session-key", "other", "--", "etcdchild", "-for", "6s", log, "b1"))
	if code := r.wait(t, time.Minute); code != 0 {
		t.Fatalf("a run with one member of three killed exited %d:\n%s", code, r.stderr)
	}
	if holder.ended() {
		t.Fatalf("the holder ended with a follower down:\n%s", holder.stderr)
	}
	t.Logf("killed follower %s", follower.name)
	os.WriteFile(release, nil, 0o600)
	if code := holder.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("the holder exited %d:\n%s", code, holder.stderr)
	}
}

// TestEtcd_LeaderKilled: the leader killed under a running session: the
// other two elect another, the session is not fenced, and a new run works.
func TestEtcd_LeaderKilled(t *testing.T) {
	c := startCluster(t)
	dir := t.TempDir()
	a, b := newMachine(t, dir, 0), newMachine(t, dir, 1)
	log, release := filepath.Join(dir, "log"), filepath.Join(dir, "release")
	holder := startRun(t, a.padrun(c, "--etcd-ttl", electionTTL, "--session-key", "k", "--", "etcdchild", "-until", release, log, "a"))
	waitUntil(t, 30*time.Second, "the holder runs", func() bool { return len(spans(t, log)) == 1 })
	leader := c.leader()
	c.kill(leader)
	t.Logf("killed leader %s", leader.name)
	r := startRun(t, b.padrun(c, "--etcd-ttl", electionTTL, "--session-key", "other", "--", "etcdchild", "-for", "6s", log, "b1"))
	if code := r.wait(t, time.Minute); code != 0 {
		t.Fatalf("a run after the leader was killed exited %d:\n%s", code, r.stderr)
	}
	if holder.ended() {
		t.Fatalf("the holder ended when the leader was killed:\n%s", holder.stderr)
	}
	os.WriteFile(release, nil, 0o600)
	if code := holder.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("the holder exited %d:\n%s", code, holder.stderr)
	}
}

// TestEtcd_AllMembersStopped_Fences: every member SIGSTOPped for longer
// than the TTL. The holder cannot renew its lease: it stops its child
// before the lease can expire and exits 76; the machine queued behind it
// takes the key once the members go on, and the log shows that the two
// children never wrote at once. (Without the fencing job and the kill on a
// lost lease, the holder runs on and the children overlap by ~200 ms.)
func TestEtcd_AllMembersStopped_Fences(t *testing.T) {
	c := startCluster(t)
	dir := t.TempDir()
	a, b := newMachine(t, dir, 0), newMachine(t, dir, 1)
	log := filepath.Join(dir, "log")
	never := filepath.Join(dir, "never")
	holder := startRun(t, a.padrun(c, "--etcd-ttl", testTTL, "--session-key", "f", "--", "etcdchild", "-until", never, log, "a"))
	waitUntil(t, 30*time.Second, "the holder runs", func() bool { return len(spans(t, log)) == 1 })
	waiter := startRun(t, b.padrun(c, "--etcd-ttl", testTTL, "--session-key", "f", "--wait", "2m", "--", "etcdchild", "-for", "200ms", log, "b"))
	waitUntil(t, 30*time.Second, "the waiter waits", func() bool { return strings.Contains(waiter.stderr.String(), "waiting up to") })
	stoppedAt := time.Now()
	for _, m := range c.members {
		m.cmd.Process.Signal(syscall.SIGSTOP)
	}
	ttl, _ := time.ParseDuration(testTTL)
	// The holder must be gone within the TTL of its last renewal, which
	// was before the members stopped.
	// Not fatal yet: a holder that is not fenced is shown writing beside
	// the waiter below.
	select {
	case <-holder.done:
	case <-time.After(ttl + 10*time.Second):
	}
	fencedIn := time.Since(stoppedAt)
	if !holder.ended() {
		t.Errorf("the holder still runs %s after the members stopped", fencedIn)
	} else if code := holder.cmd.ProcessState.ExitCode(); code != exitLost || !strings.Contains(holder.stderr.String(), "lost the hold") {
		t.Errorf("the holder exited %d, not 76 (fenced):\n%s", code, holder.stderr)
	}
	// Its child's last write came within the TTL of the stop (its lease
	// was renewed before it): padrun's own exit may come later, after it
	// tried to release the key.
	last := spans(t, log)[0].last
	if wrote := time.Unix(0, last).Sub(stoppedAt); wrote > ttl {
		t.Errorf("the holder's child wrote %s after the members stopped, past the TTL (%s)", wrote, ttl)
	}
	// Longer than the TTL, counted from the holder's last write.
	for time.Since(time.Unix(0, last)) < ttl+time.Second {
		time.Sleep(50 * time.Millisecond) // the outage's length, not synchronisation
	}
	for _, m := range c.members {
		m.cmd.Process.Signal(syscall.SIGCONT)
	}
	if code := waiter.wait(t, time.Minute); code != 0 {
		t.Fatalf("the waiter exited %d:\n%s", code, waiter.stderr)
	}
	ss := spans(t, log)
	if len(ss) != 2 {
		t.Fatalf("want both children in the log, got %v", ss)
	}
	neverAtOnce(t, ss)
	t.Logf("the holder's child last wrote %s after the members stopped, padrun exited after %s; the waiter started %s after that write",
		time.Unix(0, last).Sub(stoppedAt).Round(time.Millisecond), fencedIn.Round(time.Millisecond), time.Duration(ss[1].first-ss[0].last).Round(time.Millisecond))
}

// TestEtcd_HolderKilled_KeyLastsItsLease: padrun killed by SIGKILL (its
// machine's session with it) cannot release: its key is freed only by the
// lease's expiry, never before, and a waiter then takes it. (With the key
// put without the lease, it never goes and this fails.)
func TestEtcd_HolderKilled_KeyLastsItsLease(t *testing.T) {
	c := startCluster(t)
	dir := t.TempDir()
	a, b := newMachine(t, dir, 0), newMachine(t, dir, 1)
	log, never := filepath.Join(dir, "log"), filepath.Join(dir, "never")
	holder := startRun(t, a.padrun(c, "--etcd-ttl", testTTL, "--session-key", "kill", "--", "etcdchild", "-until", never, log, "a"))
	waitUntil(t, 30*time.Second, "the holder runs", func() bool { return len(spans(t, log)) == 1 })
	waiter := startRun(t, b.padrun(c, "--etcd-ttl", testTTL, "--session-key", "kill", "--wait", "1m", "--", "etcdchild", "-for", "50ms", log, "b"))
	waitUntil(t, 30*time.Second, "the waiter waits", func() bool { return strings.Contains(waiter.stderr.String(), "waiting up to") })
	value, _ := c.key("/padrun/kill")
	var h struct {
		Pid int `json:"pid"`
	}
	json.Unmarshal(value, &h)
	pid := padrunPid(t, holder.cmd.Process.Pid)
	killedAt := time.Now()
	syscall.Kill(pid, syscall.SIGKILL)
	waitUntil(t, 30*time.Second, "the key goes", func() bool { _, held := c.key("/padrun/kill"); return !held })
	goneIn := time.Since(killedAt)
	ttl, _ := time.ParseDuration(testTTL)
	// Renewed every third of the TTL: it lasts at least two thirds of it.
	if goneIn < ttl*2/3 {
		t.Errorf("the key of a killed holder went %s after the kill, before its lease (TTL %s) could expire", goneIn, ttl)
	}
	if code := waiter.wait(t, time.Minute); code != 0 {
		t.Fatalf("the waiter exited %d:\n%s", code, waiter.stderr)
	}
	neverAtOnce(t, spans(t, log))
	t.Logf("the key went %s after the kill", goneIn.Round(time.Millisecond))
}

// padrunPid is the padrun that unshare (pid u) forked: its only child.
func padrunPid(t *testing.T, u int) int {
	t.Helper()
	var pid int
	waitUntil(t, 10*time.Second, "padrun under unshare", func() bool {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", u, u))
		f := strings.Fields(string(b))
		if len(f) == 1 {
			fmt.Sscan(f[0], &pid)
		}
		return pid > 0
	})
	return pid
}

// TestEtcd_Unreachable_Refuses125: no member answers: padrun refuses with
// 125, naming each endpoint and why, and never runs the child.
func TestEtcd_Unreachable_Refuses125(t *testing.T) {
	dir := t.TempDir()
	ran := filepath.Join(dir, "ran")
	ep := fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	cmd := exec.Command("padrun", "--etcd", ep+",http://127.0.0.1:1", "--guard", filepath.Join(dir, "s.jsonl"), "--", "etcdchild", "-for", "0s", ran, "x")
	cmd.Env = append(os.Environ(), "PADRUN_REGISTRY_DIR="+filepath.Join(dir, "reg"))
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != exitFailed {
		t.Fatalf("exit %d (%v), not 125:\n%s", code, err, out)
	}
	if !strings.Contains(string(out), ep+": dial tcp") || !strings.Contains(string(out), "http://127.0.0.1:1: dial tcp") {
		t.Errorf("the refusal does not name each endpoint and why:\n%s", out)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Error("the child ran unguarded")
	}
	if matches, _ := filepath.Glob(filepath.Join(dir, "*.live.*")); len(matches) > 0 {
		t.Errorf("the local hold was left: %v", matches)
	}
}

// BenchmarkEtcdHandover measures the handover across machines: from the
// holder's child's last write to the queued machine's child's first one,
// through the key's deletion and the waiter's watch:
// go test -run '^$' -bench EtcdHandover -benchtime 1x -args -rounds=20
func BenchmarkEtcdHandover(b *testing.B) {
	c := startCluster(b)
	dir := b.TempDir()
	a, w := newMachine(b, dir, 0), newMachine(b, dir, 1)
	for i := 0; i < b.N; i++ {
		var gaps []time.Duration
		for round := range *rounds {
			log := filepath.Join(dir, fmt.Sprintf("log%d-%d", i, round))
			key := fmt.Sprintf("h%d-%d", i, round)
			release := log + ".release"
			holder := startRun(b, a.padrun(c, "--session-key", key, "--", "etcdchild", "-until", release, log, "a"))
			waitUntil(b, 30*time.Second, "the holder runs", func() bool { return len(spans(b, log)) == 1 })
			waiter := startRun(b, w.padrun(c, "--session-key", key, "--wait", "1m", "--", "etcdchild", "-for", "0s", log, "b"))
			waitUntil(b, 30*time.Second, "the waiter waits", func() bool { return strings.Contains(waiter.stderr.String(), "waiting up to") })
			os.WriteFile(release, nil, 0o600)
			if code := holder.wait(b, 30*time.Second); code != 0 {
				b.Fatalf("holder exited %d:\n%s", code, holder.stderr)
			}
			if code := waiter.wait(b, 30*time.Second); code != 0 {
				b.Fatalf("waiter exited %d:\n%s", code, waiter.stderr)
			}
			ss := spans(b, log)
			if len(ss) != 2 {
				b.Fatalf("want two children, got %v", ss)
			}
			gaps = append(gaps, time.Duration(ss[1].first-ss[0].last))
		}
		slices.Sort(gaps)
		med := gaps[len(gaps)/2]
		fmt.Printf("handover across machines through etcd: median %s, min %s, max %s (%d rounds)\n",
			med.Round(time.Microsecond), gaps[0].Round(time.Microsecond), gaps[len(gaps)-1].Round(time.Microsecond), len(gaps))
		b.ReportMetric(float64(med.Microseconds())/1000, "handover-ms")
	}
}

// TestEtcd_Verbs: status and ls show the holder in etcd; unlock never
// deletes a key whose lease is alive, even with --force, and deletes a key
// without a lease (no live padrun's, shown as leaseless) without it.
// (Unlock ignoring the lease's TTL fails it; so does one that keeps a
// leaseless key without --force.)
func TestEtcd_Verbs(t *testing.T) {
	c := startCluster(t)
	dir := t.TempDir()
	a := newMachine(t, dir, 0)
	log, release := filepath.Join(dir, "log"), filepath.Join(dir, "release")
	holder := startRun(t, a.padrun(c, "--session-key", "v", "--", "etcdchild", "-until", release, log, "a"))
	waitUntil(t, 30*time.Second, "the holder runs", func() bool { return len(spans(t, log)) == 1 })
	file := filepath.Join(dir, "here.jsonl") // this machine's copy: free locally
	verb := func(want int, args ...string) string {
		t.Helper()
		cmd := exec.Command("padrun", args...)
		cmd.Env = append(os.Environ(), "PADRUN_REGISTRY_DIR="+filepath.Join(dir, "reg"), "PADRUN_ETCD="+c.endpoints())
		out, _ := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != want {
			t.Fatalf("padrun %s: exit %d, want %d:\n%s", strings.Join(args, " "), code, want, out)
		}
		return string(out)
	}
	out := verb(exitRefused, "status", "--etcd", c.endpoints(), "--session-key", "v", file)
	if !strings.Contains(out, "etcd: /padrun/v held by padrun pid") || !strings.Contains(out, "machine abc00000") || !strings.Contains(out, "alive, expires in") {
		t.Errorf("status does not show the holder in etcd:\n%s", out)
	}
	if out := verb(0, "ls", "--etcd", c.endpoints()); !strings.Contains(out, "/padrun/v held by padrun pid") {
		t.Errorf("ls does not list the holder in etcd:\n%s", out)
	}
	var st []struct {
		Local struct {
			State string `json:"state"`
		} `json:"local"`
		Etcd []struct {
			Key    string `json:"key"`
			TTL    int    `json:"ttl"`
			Holder struct {
				MachineID string `json:"machineId"`
				Lease     string `json:"lease"`
			} `json:"holder"`
		} `json:"etcd"`
	}
	out = verb(exitRefused, "status", "--json", "--session-key", "v", file)
	if err := json.Unmarshal([]byte(out), &st); err != nil || len(st) != 1 || st[0].Local.State != "free" || len(st[0].Etcd) != 1 ||
		st[0].Etcd[0].Key != "/padrun/v" || st[0].Etcd[0].TTL <= 0 || !strings.HasPrefix(st[0].Etcd[0].Holder.MachineID, "abc00000") || st[0].Etcd[0].Holder.Lease == "" {
		t.Errorf("status --json does not show the holder in etcd (%v):\n%s", err, out)
	}
	// --wait runs out behind a holder in etcd: 75, saying how long it waited.
	w := startRun(t, newMachine(t, dir, 1).padrun(c, "--session-key", "v", "--wait", "1s", "--", "etcdchild", "-for", "0s", log, "w"))
	if code := w.wait(t, 30*time.Second); code != exitRefused || !strings.Contains(w.stderr.String(), "hint: waited 1s for padrun pid") {
		t.Errorf("--wait ran out: exit %d, want 75 saying it waited:\n%s", code, w.stderr)
	}
	if out := verb(exitRefused, "unlock", "--force", "--etcd", c.endpoints(), "--session-key", "v", file); !strings.Contains(out, "kept /padrun/v in etcd") {
		t.Errorf("unlock --force says nothing of the key it kept:\n%s", out)
	}
	if _, held := c.key("/padrun/v"); !held {
		t.Fatal("unlock --force deleted a key whose lease is alive")
	}
	os.WriteFile(release, nil, 0o600)
	if code := holder.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("holder exited %d:\n%s", code, holder.stderr)
	}
	verb(0, "status", "--session-key", "v", file) // PADRUN_ETCD names the cluster
	// A key without a lease, as etcdctl put writes it.
	if err := exec.Command("etcdctl", "--endpoints", c.endpoints(), "put", "/padrun/bare", "x").Run(); err != nil {
		t.Fatal(err)
	}
	// No lease keeps it: no live padrun's. Status says so, unlock removes
	// it without --force.
	if out := verb(exitRefused, "status", "--etcd", c.endpoints(), "--session-key", "bare", file); !strings.Contains(out, "/padrun/bare held by a value that is not padrun's, lease 0 (leaseless: no live padrun's") {
		t.Errorf("status does not show the key as leaseless:\n%s", out)
	}
	verb(0, "unlock", "--etcd", c.endpoints(), "--session-key", "bare", file)
	if _, held := c.key("/padrun/bare"); held {
		t.Error("unlock kept a key without a lease")
	}
}
