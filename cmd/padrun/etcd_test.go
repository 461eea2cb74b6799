//go:build linux

package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var etcdRounds = flag.Int("etcd-rounds", 3, "rounds of the etcd race test")

// etcdChild stands in for a harness in the etcd tests: it appends
// "ID NANOS" to LOG at once and then every 5 ms, until FILE exists
// (-until) or for a duration (-for), so that the log shows when it wrote.
func etcdChild() {
	fs := flag.NewFlagSet("etcdchild", flag.ExitOnError)
	until := fs.String("until", "", "run until this `file` exists")
	dur := fs.Duration("for", 0, "run this long")
	write := fs.String("write", "", "append -line to this `file` once -when exists")
	line := fs.String("line", "", "the `line` -write appends")
	when := fs.String("when", "", "the `file` whose existence starts -write")
	fs.Parse(os.Args[1:])
	log, id := fs.Arg(0), fs.Arg(1)
	f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	end := time.Now().Add(*dur)
	for {
		fmt.Fprintf(f, "%s %d\n", id, time.Now().UnixNano())
		if *write != "" {
			if _, err := os.Stat(*when); err == nil {
				appendLine(*write, *line)
				*write = ""
			}
		}
		if *until != "" {
			if _, err := os.Stat(*until); err == nil {
				return
			}
		} else if !time.Now().Before(end) {
			return
		}
		time.Sleep(5 * time.Millisecond) // the child's pace, not synchronisation
	}
}

// cluster is a three-member etcd cluster on 127.0.0.1.
type cluster struct {
	t       testing.TB
	members []*member
}

type member struct {
	name, client, peer string
	cmd                *exec.Cmd
	stopped            bool
	exited             chan struct{} // closed once the member is reaped
}

func freePort(t testing.TB) int {
	p, err := freePortErr()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func freePortErr() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startCluster starts three members, data in t.TempDir(), and waits until
// they answer; they are killed when t ends. A member that dies at start (a
// port taken meanwhile by another process) starts the cluster again, on
// other ports.
func startCluster(t testing.TB) *cluster {
	requireTool(t, "etcd", "etcdctl", "unshare")
	requireRoot(t, "make other machines (mount and pid namespaces, a machine id bind-mounted)")
	for try := 0; ; try++ {
		c, err := tryCluster(t)
		if err == nil {
			return c
		}
		if try == 2 {
			t.Fatal(err)
		}
		t.Logf("etcd did not start (%v): again, on other ports", err)
	}
}

func tryCluster(t testing.TB) (*cluster, error) {
	c, stop, err := launchCluster(t.TempDir(), func() int { return freePort(t) })
	if err != nil {
		return nil, err
	}
	c.t = t
	t.Cleanup(stop)
	return c, nil
}

// launchCluster starts three members with their data in dir, on ports
// port gives, and waits until they answer; stop kills them.
func launchCluster(dir string, freePort func() int) (c *cluster, stop func(), err error) {
	c = &cluster{}
	var initial []string
	used := map[int]bool{}
	port := func() int {
		for {
			if p := freePort(); !used[p] {
				used[p] = true
				return p
			}
		}
	}
	for i := range 3 {
		m := &member{name: fmt.Sprintf("m%d", i), exited: make(chan struct{}),
			client: fmt.Sprintf("http://127.0.0.1:%d", port()), peer: fmt.Sprintf("http://127.0.0.1:%d", port())}
		c.members = append(c.members, m)
		initial = append(initial, m.name+"="+m.peer)
	}
	token := fmt.Sprintf("padrun-%d-%d", os.Getpid(), time.Now().UnixNano())
	for _, m := range c.members {
		m.cmd = exec.Command("etcd", "--name", m.name, "--data-dir", filepath.Join(dir, m.name),
			"--listen-client-urls", m.client, "--advertise-client-urls", m.client,
			"--listen-peer-urls", m.peer, "--initial-advertise-peer-urls", m.peer,
			"--initial-cluster", strings.Join(initial, ","), "--initial-cluster-token", token,
			"--initial-cluster-state", "new", "--logger", "zap", "--log-outputs", filepath.Join(dir, m.name+".log"))
		m.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := m.cmd.Start(); err != nil {
			return nil, nil, err
		}
		go func() {
			m.cmd.Wait()
			close(m.exited)
		}()
	}
	stop = func() {
		for _, m := range c.members {
			m.cmd.Process.Signal(syscall.SIGCONT)
			m.cmd.Process.Kill()
			<-m.exited
		}
	}
	if err := c.waitHealthy(c.members); err != nil {
		stop()
		return nil, nil, err
	}
	return c, stop, nil
}

// endpoints are the members' client URLs, comma-separated, killed ones
// first: padrun must go past them.
func (c *cluster) endpoints() string {
	var dead, alive []string
	for _, m := range c.members {
		if m.stopped {
			dead = append(dead, m.client)
		} else {
			alive = append(alive, m.client)
		}
	}
	return strings.Join(append(dead, alive...), ",")
}

// post sends a gateway request to m and decodes the answer.
func (c *cluster) post(m *member, path string, req, resp any) error {
	b, _ := json.Marshal(req)
	hc := http.Client{Timeout: 2 * time.Second}
	r, err := hc.Post(m.client+path, "application/json", bytes.NewReader(b))
	if err != nil {
		return err
	}
	defer r.Body.Close()
	if r.StatusCode != 200 {
		return fmt.Errorf("%s: HTTP %d", path, r.StatusCode)
	}
	return json.NewDecoder(r.Body).Decode(resp)
}

// waitHealthy waits until each of ms answers a linearizable read.
func (c *cluster) waitHealthy(ms []*member) error {
	deadline := time.Now().Add(60 * time.Second)
	for _, m := range ms {
		for {
			var r map[string]any
			err := c.post(m, "/v3/kv/range", map[string]any{"key": base64.StdEncoding.EncodeToString([]byte("health"))}, &r)
			if err == nil {
				break
			}
			select {
			case <-m.exited:
				return fmt.Errorf("etcd member %s exited: %v", m.name, m.cmd.ProcessState)
			default:
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("etcd member %s does not answer: %v", m.name, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nil
}

// leader is the member that leads, as the members say.
func (c *cluster) leader() *member {
	for _, m := range c.members {
		var st struct {
			Header struct {
				MemberID string `json:"member_id"`
			} `json:"header"`
			Leader string `json:"leader"`
		}
		if m.stopped || c.post(m, "/v3/maintenance/status", map[string]any{}, &st) != nil {
			continue
		}
		if st.Leader == st.Header.MemberID {
			return m
		}
		for _, o := range c.members {
			var so struct {
				Header struct {
					MemberID string `json:"member_id"`
				} `json:"header"`
			}
			if !o.stopped && c.post(o, "/v3/maintenance/status", map[string]any{}, &so) == nil && so.Header.MemberID == st.Leader {
				return o
			}
		}
	}
	c.t.Fatal("no member leads")
	return nil
}

func (c *cluster) kill(m *member) {
	m.cmd.Process.Kill()
	<-m.exited
	m.stopped = true
}

// key reads key's value and lease from the first member that answers; ok
// is false when there is no such key.
func (c *cluster) key(key string) (value []byte, ok bool) {
	for _, m := range c.members {
		var r struct {
			Kvs []struct {
				Value []byte `json:"value"`
			} `json:"kvs"`
		}
		if m.stopped || c.post(m, "/v3/kv/range", map[string]any{"key": []byte(key)}, &r) != nil {
			continue
		}
		if len(r.Kvs) == 0 {
			return nil, false
		}
		return r.Kvs[0].Value, true
	}
	c.t.Fatal("no member answers")
	return nil, false
}

// machine is another machine: its own folder (machine id, session file,
// registry), and padruns run in their own mount and pid namespaces with
// that machine id bind-mounted over /etc/machine-id.
type machine struct {
	dir string
	// shared, when set, is a path every machine sees its own work
	// folder at (dir/work bind-mounted over it): copies of one session at
	// one path, as runners restored from one cache have them.
	shared string
	env    []string // more of padrun's environment
	cgroup int      // the cgroup folder padrun is born in, when > 0
}

func newMachine(t testing.TB, base string, i int) *machine {
	m := &machine{dir: filepath.Join(base, fmt.Sprintf("machine%d", i))}
	if err := os.MkdirAll(m.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	id := fmt.Sprintf("abc%05d%024d\n", i, 0) // "machine abc0000N" in messages
	if err := os.WriteFile(filepath.Join(m.dir, "machine-id"), []byte(id), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(m.dir, "work"), 0o700); err != nil {
		t.Fatal(err)
	}
	return m
}

// padrunBare is a padrun on m: args only, no flag added.
func (m *machine) padrunBare(args ...string) *exec.Cmd {
	script := `mount --bind "$1/machine-id" /etc/machine-id && { [ -z "$2" ] || mount --bind "$1/work" "$2"; } && shift 2 && exec padrun "$@"`
	full := append([]string{"--mount", "--pid", "--fork", "--mount-proc", "--kill-child", "sh", "-c", script, "sh", m.dir, m.shared}, args...)
	cmd := exec.Command("unshare", full...)
	cmd.Env = append(append(os.Environ(), "PADRUN_REGISTRY_DIR="+filepath.Join(m.dir, "reg")), m.env...)
	if m.cgroup > 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: m.cgroup}
	}
	return cmd
}

// padrun is a padrun on m: the etcd flags, then args.
func (m *machine) padrun(c *cluster, args ...string) *exec.Cmd {
	return m.padrunBare(append([]string{"--etcd", c.endpoints(), "--guard", filepath.Join(m.dir, "s.jsonl")}, args...)...)
}

// run is a started padrun, its stderr kept.
type etcdRun struct {
	cmd    *exec.Cmd
	stderr *syncBuffer
	done   chan struct{}
	err    error
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startRun(t testing.TB, cmd *exec.Cmd) *etcdRun {
	r := &etcdRun{cmd: cmd, stderr: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stderr = r.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		r.err = cmd.Wait()
		close(r.done)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-r.done
	})
	return r
}

// wait waits up to d for r to end and returns its exit code.
func (r *etcdRun) wait(t testing.TB, d time.Duration) int {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(d):
		t.Fatalf("padrun did not end within %s; stderr:\n%s", d, r.stderr)
	}
	return r.cmd.ProcessState.ExitCode()
}

func (r *etcdRun) ended() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// waitFor polls cond every 10 ms until it holds, or fails after d.
func waitUntil(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, d)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// span is when a child wrote to the log: its first and last line.
type span struct {
	id          string
	first, last int64
}

// spans reads the log of etcdchild lines, one span per id.
func spans(t testing.TB, log string) []span {
	t.Helper()
	f, err := os.Open(log)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	byID := map[string]*span{}
	var order []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		id, ns, ok := strings.Cut(sc.Text(), " ")
		n, err := strconv.ParseInt(ns, 10, 64)
		if !ok || err != nil {
			continue // a line cut by a kill
		}
		s := byID[id]
		if s == nil {
			s = &span{id: id, first: n}
			byID[id] = s
			order = append(order, id)
		}
		s.first, s.last = min(s.first, n), max(s.last, n)
	}
	out := make([]span, 0, len(order))
	for _, id := range order {
		out = append(out, *byID[id])
	}
	return out
}

// neverAtOnce fails t when two children's spans overlap.
func neverAtOnce(t testing.TB, ss []span) {
	t.Helper()
	slices.SortFunc(ss, func(a, b span) int { return int(a.first - b.first) })
	for i := 1; i < len(ss); i++ {
		if ss[i].first <= ss[i-1].last {
			t.Errorf("two children wrote at once: %s until %s, %s from %s (%s overlap)",
				ss[i-1].id, time.Unix(0, ss[i-1].last).Format("15:04:05.000"), ss[i].id,
				time.Unix(0, ss[i].first).Format("15:04:05.000"), time.Duration(ss[i-1].last-ss[i].first))
		}
	}
}
