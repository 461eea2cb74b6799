//go:build unix

package registry

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/padrun/padrun/marker/ident"
)

// The tests below craft records as pad v2 (internal/cli/session_registry.go)
// and pad v1 write them, and check each of pad's reading rules.

// padDir is a registry folder with a short path: unix socket paths are
// bounded (108 bytes).
func padDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "reg")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// write writes body (a string as is, anything else as JSON) to dir/name.
func write(t *testing.T, dir, name string, body any) string {
	t.Helper()
	b, ok := body.(string)
	if !ok {
		j, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		b = string(j)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(b), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func mustLoad(t *testing.T, path string) Entry {
	t.Helper()
	e, ok := load(path)
	if !ok {
		t.Fatalf("%s is not listed", path)
	}
	return e
}

// nextDead numbers the dead pids handed out.
var nextDead atomic.Int64

// deadPid is a pid that no process has: above Linux's PID_MAX_LIMIT (2^22),
// so that no pid reuse on a busy machine brings it to life (a reaped
// child's pid can come back within seconds where pid_max is 32768).
func deadPid(*testing.T) int { return 1<<22 + 1 + int(nextDead.Add(1)) }

func token(t *testing.T, pid int) string {
	t.Helper()
	tok, err := ident.StartToken(pid)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// v2 is a record as `pad session register` writes it for session pid pid:
// the registrar is the short-lived pad command, dead by now.
func v2(t *testing.T, pid int, procStart string, extra map[string]any) map[string]any {
	rec := map[string]any{
		"session_pid": pid, "session_pid_source": "CLAUDE_PID", "session_pid_verified": true,
		"session_id": "sess-1", "agent": "wren", "pid": deadPid(t), "cwd": "/w",
		"registered_at": time.Now().UTC().Format(time.RFC3339Nano),
	}
	if procStart != "" {
		rec["proc_start"] = procStart
	}
	for k, v := range extra {
		rec[k] = v
	}
	return rec
}

// listen binds a unix socket at path, as Claude Code binds its messaging
// socket; it is unbound (and removed) when the test ends.
func listen(t *testing.T, path string) net.Listener {
	t.Helper()
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// socketFields are the socket's identity as pad records it: os.Stat's
// mtime in nanoseconds, and the inode and device of its Stat_t.
func socketFields(t *testing.T, path string) map[string]any {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return map[string]any{
		"messaging_socket_path": path, "socket_mtime_unix_nano": fi.ModTime().UnixNano(),
		"socket_ino": st.Ino, "socket_dev": uint64(st.Dev),
	}
}

func with(m map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

// TestLiveness_SocketAndPid: every recorded signal must agree (pad's
// OwnerLiveness), with a real socket and real pids.
func TestLiveness_SocketAndPid(t *testing.T) {
	dir := padDir(t)
	self := os.Getpid()
	tok := token(t, self)
	sock := filepath.Join(dir, "live.sock")
	listen(t, sock)
	live := socketFields(t, sock)

	// gone: bound, recorded, then unbound (the listener's close removes it).
	gonePath := filepath.Join(dir, "gone.sock")
	l := listen(t, gonePath)
	gone := socketFields(t, gonePath)
	l.Close()

	// rebound: a second socket moved over the first's path while both
	// exist, so it cannot get the first one's inode.
	rePath := filepath.Join(dir, "re.sock")
	listen(t, rePath)
	rebound := socketFields(t, rePath)
	listen(t, filepath.Join(dir, "re2.sock"))
	if err := os.Rename(filepath.Join(dir, "re2.sock"), rePath); err != nil {
		t.Fatal(err)
	}

	// mtime only (no inode recorded): equal, then touched.
	mtPath := filepath.Join(dir, "mt.sock")
	listen(t, mtPath)
	mtOnly := with(socketFields(t, mtPath), "socket_ino", 0, "socket_dev", 0)
	mtTouched := filepath.Join(dir, "mt2.sock")
	listen(t, mtTouched)
	touched := with(socketFields(t, mtTouched), "socket_ino", 0, "socket_dev", 0)
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(mtTouched, later, later); err != nil {
		t.Fatal(err)
	}

	notDir := write(t, dir, "plain", "x")
	unstatable := map[string]any{"messaging_socket_path": filepath.Join(notDir, "s.sock"), "socket_mtime_unix_nano": 1, "socket_ino": 1, "socket_dev": 1}

	dead := deadPid(t)
	cases := []struct {
		name string
		rec  map[string]any
		want ident.Verdict
	}{
		{"socket and pid alive", v2(t, self, tok, live), ident.Alive},
		{"socket gone, pid alive", v2(t, self, tok, gone), ident.Dead},
		{"socket rebound, pid alive", v2(t, self, tok, rebound), ident.Dead},
		{"socket device differs", v2(t, self, tok, with(live, "socket_dev", live["socket_dev"].(uint64)+1)), ident.Dead},
		{"socket without recorded identity", v2(t, self, tok, with(live, "socket_mtime_unix_nano", 0)), ident.Dead},
		{"socket mtime only, equal", v2(t, self, tok, mtOnly), ident.Alive},
		{"socket mtime only, differs", v2(t, self, tok, touched), ident.Dead},
		{"socket cannot be stat'ed", v2(t, self, tok, unstatable), ident.Unknown},
		{"socket cannot be stat'ed, pid dead", v2(t, dead, "1", unstatable), ident.Dead},
		{"socket alive, pid gone", v2(t, dead, "1", live), ident.Dead},
		{"socket alive, pid reused", v2(t, os.Getppid(), "1", live), ident.Dead},
		{"no socket, pid alive, token equal", v2(t, self, tok, nil), ident.Alive},
		{"no socket, pid alive, no token", v2(t, self, "", nil), ident.Alive},
		{"no socket, pid reused", v2(t, os.Getppid(), "1", nil), ident.Dead},
		{"no socket, pid gone", v2(t, dead, "", nil), ident.Dead},
		{"no socket, pid beyond any pid", v2(t, 1<<32+1, "", nil), ident.Dead},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := mustLoad(t, write(t, dir, strconv.Itoa(i+1)+".json", c.rec))
			if e.Malformed || e.Liveness != c.want {
				t.Fatalf("liveness %v (%s), malformed %v; want %v", e.Liveness, e.Reason, e.Malformed, c.want)
			}
		})
	}
}

func TestLiveness_ZombieWithToken_IsDead(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	pid := cmd.Process.Pid
	var tok string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		var zombie bool
		var err error
		tok, zombie, err = ident.State(pid)
		if err == nil && zombie {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d did not become a zombie: %v", pid, err)
		}
	}
	dir := padDir(t)
	if e := mustLoad(t, write(t, dir, "1.json", v2(t, pid, tok, nil))); e.Liveness != ident.Dead {
		t.Fatalf("a zombie with its token recorded is %v (%s), want dead", e.Liveness, e.Reason)
	}
	// No token recorded: pad judges on kill(pid, 0) alone, which a zombie passes.
	if e := mustLoad(t, write(t, dir, "2.json", v2(t, pid, "", nil))); e.Liveness != ident.Alive {
		t.Fatalf("a zombie without a token is %v (%s), want alive as pad says", e.Liveness, e.Reason)
	}
}

func TestLiveness_ProcUnreadable_IsUnknown(t *testing.T) {
	defer func(f func(int) (string, bool, error)) { procState = f }(procState)
	procState = func(int) (string, bool, error) { return "", false, unix.EACCES }
	e := mustLoad(t, write(t, padDir(t), "1.json", v2(t, os.Getpid(), "123", nil)))
	if e.Liveness != ident.Unknown {
		t.Fatalf("an unreadable /proc gives %v (%s), want unknown", e.Liveness, e.Reason)
	}
}

func TestLiveness_NoSocketNoPid_IsDead(t *testing.T) {
	if v, why := OwnerLiveness(Owner{}); v != ident.Dead {
		t.Fatalf("an owner with no signal is %v (%s), want dead", v, why)
	}
}

// TestLegacy_OwnerFromSocketName: a v1 record (no session_pid) is owned by
// the pid in its socket's name when it parses, else by its pid; judged by
// that pid alone; it shows no agent and no session id and is never verified.
func TestLegacy_OwnerFromSocketName(t *testing.T) {
	dir := padDir(t)
	self, dead := os.Getpid(), deadPid(t)
	v1 := func(registrar int, extra ...any) map[string]any {
		return with(map[string]any{"pid": registrar, "cwd": "/legacy", "registered_at": "2026-08-20T00:00:00Z"}, extra...)
	}
	sockOf := func(pid int) string { return "/nonexistent/" + strconv.Itoa(pid) + ".sock" }
	cases := []struct {
		name   string
		rec    map[string]any
		owner  int
		source string
		want   ident.Verdict
	}{
		{"socket owner alive, registrar dead", v1(dead, "messaging_socket_path", sockOf(self)), self, "legacy-socket", ident.Alive},
		{"socket owner dead, registrar alive", v1(self, "messaging_socket_path", sockOf(dead)), dead, "legacy-socket", ident.Dead},
		{"registrar dead, no socket", v1(dead), dead, "legacy-registrar", ident.Dead},
		{"registrar alive, no socket", v1(self), self, "legacy-registrar", ident.Alive},
		{"socket name not a pid", v1(self, "messaging_socket_path", "/run/claude.sock"), self, "legacy-registrar", ident.Alive},
		{"socket name 0", v1(dead, "messaging_socket_path", "/run/0.sock"), dead, "legacy-registrar", ident.Dead},
		{"socket name with two dots", v1(dead, "messaging_socket_path", "/run/"+strconv.Itoa(self)+".sock.old"), dead, "legacy-registrar", ident.Dead},
		{"session_pid 0 written out", v1(dead, "session_pid", 0, "messaging_socket_path", sockOf(self)), self, "legacy-socket", ident.Alive},
		{"a token is not used", v1(dead, "proc_start", "1", "messaging_socket_path", sockOf(self)), self, "legacy-socket", ident.Alive},
		{"a socket identity is not used", v1(dead, "messaging_socket_path", sockOf(self), "socket_mtime_unix_nano", 1, "socket_ino", 1), self, "legacy-socket", ident.Alive},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := with(c.rec, "agent", "claude", "session_id", "abc", "session_pid_verified", true, "session_pid_source", "CLAUDE_PID")
			e := mustLoad(t, write(t, dir, strconv.Itoa(i+1)+".json", rec))
			switch {
			case e.Malformed || !e.Legacy:
				t.Fatalf("malformed %v (%s), legacy %v: want a legacy record", e.Malformed, e.Reason, e.Legacy)
			case e.SessionPID != c.owner || e.SessionPIDSource != c.source:
				t.Fatalf("owner %d (%s), want %d (%s)", e.SessionPID, e.SessionPIDSource, c.owner, c.source)
			case e.Liveness != c.want:
				t.Fatalf("liveness %v (%s), want %v", e.Liveness, e.Reason, c.want)
			case e.Agent != "" || e.SessionID != "" || e.SessionPIDVerified || e.Padrun != nil:
				t.Fatalf("a legacy row shows agent %q, session id %q, verified %v: want none", e.Agent, e.SessionID, e.SessionPIDVerified)
			}
			if pid, _ := e.Owner(); pid != c.owner {
				t.Fatalf("Owner() = %d, want %d", pid, c.owner)
			}
		})
	}
}

// TestWellFormed_AsPad: files that parse but that no writer wrote, and
// files that do not parse, are malformed: listed, unknown, timed by their
// mtime, never judged alive or dead.
func TestWellFormed_AsPad(t *testing.T) {
	dir := padDir(t)
	self := os.Getpid()
	tok := token(t, self)
	good := v2(t, self, tok, nil)
	cases := []struct {
		name string
		body any
	}{
		{"empty object", `{}`},
		{"null", `null`},
		{"array", `[]`},
		{"not JSON", `{"session_pid":`},
		{"invalid UTF-8", "{\"pid\":1,\"agent\":\"\xff\"}"},
		{"over 64 KiB", `{"pid":1,"x":"` + strings.Repeat("x", MaxSize) + `"}`},
		{"no registered_at", with(good, "registered_at", nil)},
		{"registered_at not RFC3339", with(good, "registered_at", "2026-08-01 00:00:00")},
		{"empty cwd", with(good, "cwd", "")},
		{"no cwd", with(good, "cwd", nil)},
		{"registrar pid 0", with(good, "pid", 0)},
		{"registrar pid negative", with(good, "pid", -3)},
		{"no registrar pid", with(good, "pid", nil)},
		{"negative session_pid", with(good, "session_pid", -5)},
		{"numeric proc_start", with(good, "proc_start", 12345)},
		{"string session_pid", with(good, "session_pid", strconv.Itoa(self))},
		{"string session_pid_verified", with(good, "session_pid_verified", "yes")},
		{"negative socket_ino", with(good, "socket_ino", -1)},
	}
	mtime := time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := write(t, dir, strconv.Itoa(i+1)+".json", c.body)
			if err := os.Chtimes(path, mtime, mtime); err != nil {
				t.Fatal(err)
			}
			e := mustLoad(t, path)
			if !e.Malformed || e.Liveness != ident.Unknown {
				t.Fatalf("malformed %v, liveness %v (%s): want malformed and unknown", e.Malformed, e.Liveness, e.Reason)
			}
			if !e.Time.Equal(mtime) {
				t.Fatalf("time %v, want the file's mtime %v", e.Time, mtime)
			}
		})
	}
	// What every writer wrote is well formed, nulls of optional fields included.
	for i, rec := range []any{good, with(good, "registered_at", "2026-08-01T00:00:00+02:00"), with(good, "proc_start", nil, "messaging_socket_path", nil)} {
		if e := mustLoad(t, write(t, dir, strconv.Itoa(100+i)+".json", rec)); e.Malformed || e.Liveness != ident.Alive {
			t.Errorf("well-formed record %d: malformed %v, liveness %v (%s)", i, e.Malformed, e.Liveness, e.Reason)
		}
	}
}

// TestNotRecords: only regular files named ^[0-9]+\.json$ are records;
// symlinks, FIFOs, folders, sockets and pad's other files are never listed
// and never pruned, however old.
func TestNotRecords_NeverListedNorPruned(t *testing.T) {
	dir := padDir(t)
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	dead := deadPid(t)
	target := write(t, dir, "1.json", v2(t, dead, "1", nil))
	others := map[string]func(string) error{
		"2.json":       func(p string) error { return os.Symlink(target, p) },
		"3.json":       func(p string) error { return os.Symlink(filepath.Join(dir, "nowhere"), p) },
		"4.json":       func(p string) error { return unix.Mkfifo(p, 0o600) },
		"5.json":       func(p string) error { return os.Mkdir(p, 0o700) },
		"6.json":       func(p string) error { _, err := net.Listen("unix", p); return err },
		"arm-s1.json":  func(p string) error { return os.WriteFile(p, []byte(`{"armed":true,"pid":1}`), 0o600) },
		".arm-1.tmp":   func(p string) error { return os.WriteFile(p, []byte(`{}`), 0o600) },
		".lock":        func(p string) error { return os.WriteFile(p, nil, 0o600) },
		"7.json.tmp":   func(p string) error { return os.WriteFile(p, []byte(`{}`), 0o600) },
		"-8.json":      func(p string) error { return os.WriteFile(p, []byte(`{}`), 0o600) },
		"9.JSON":       func(p string) error { return os.WriteFile(p, []byte(`{}`), 0o600) },
		"notes.json":   func(p string) error { return os.WriteFile(p, []byte(`{}`), 0o600) },
		".10.json.tmp": func(p string) error { return os.WriteFile(p, []byte(`{}`), 0o600) },
	}
	old := time.Now().Add(-100 * time.Hour)
	for name, mk := range others {
		p := filepath.Join(dir, name)
		if err := mk(p); err != nil {
			t.Fatal(name, err)
		}
		unix.Lutimes(p, []unix.Timeval{unix.NsecToTimeval(old.UnixNano()), unix.NsecToTimeval(old.UnixNano())}) // Best effort.
	}
	entries, err := r.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Path != target {
		t.Fatalf("listed %v, want only 1.json", paths(entries))
	}
	res, err := r.Prune(t.Context(), time.Nanosecond, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if res.Dead != 1 || res.Unknown != 0 {
		t.Fatalf("prune = %+v, want the one dead record", res)
	}
	for name := range others {
		if _, err := os.Lstat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s was removed: %v", name, err)
		}
	}
}

func paths(es []Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, filepath.Base(e.Path))
	}
	return out
}

// keys returns a JSON object's keys in order.
func keys(t *testing.T, b []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	var out []string
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s", b)
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, k.(string))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestJSONRow_PadSessionRecordShape: rows carry pad's SessionRecord keys in
// its order, with its omissions, and padrun's object last.
func TestJSONRow_PadSessionRecordShape(t *testing.T) {
	dir := padDir(t)
	self := os.Getpid()
	tok := token(t, self)
	sock := filepath.Join(dir, "s.sock")
	listen(t, sock)
	padrunRec := v2(t, self, tok, map[string]any{"session_pid_source": "self", "padrun": map[string]any{"version": "0.1.0", "harness": "pi", "future": []int{1}}})
	cases := []struct {
		name string
		body any
		keys string
		vals map[string]any
	}{
		{"pad v2", v2(t, self, tok, socketFields(t, sock)),
			"session_pid session_pid_source session_pid_verified agent cwd session_id liveness registered_at messaging_socket_path path",
			map[string]any{"session_pid": float64(self), "session_pid_source": "CLAUDE_PID", "session_pid_verified": true, "agent": "wren", "cwd": "/w", "session_id": "sess-1", "liveness": "alive", "messaging_socket_path": sock}},
		{"padrun", padrunRec,
			"session_pid session_pid_source session_pid_verified agent cwd session_id liveness registered_at path padrun",
			map[string]any{"session_pid_source": "self", "liveness": "alive", "padrun": map[string]any{"version": "0.1.0", "harness": "pi", "future": []any{float64(1)}}}},
		{"anonymous pad v2", with(v2(t, self, tok, nil), "agent", nil, "session_id", nil, "session_pid_verified", nil),
			"session_pid session_pid_source session_pid_verified agent cwd liveness registered_at path",
			map[string]any{"agent": "", "session_pid_verified": false}},
		{"legacy", map[string]any{"pid": self, "cwd": "/l", "registered_at": "2026-08-20T00:00:00Z", "agent": "x", "messaging_socket_path": "/run/claude.sock"},
			"session_pid session_pid_source session_pid_verified agent cwd liveness registered_at legacy messaging_socket_path path",
			map[string]any{"session_pid": float64(self), "session_pid_source": "legacy-registrar", "session_pid_verified": false, "agent": "", "legacy": true, "registered_at": "2026-08-20T00:00:00Z"}},
		{"malformed", `{"pid":`,
			"session_pid session_pid_verified agent cwd liveness registered_at malformed path",
			map[string]any{"session_pid": float64(0), "agent": "", "cwd": "", "liveness": "unknown", "malformed": true, "registered_at": "2026-01-02T03:04:05Z"}},
	}
	mtime := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := write(t, dir, strconv.Itoa(i+1)+".json", c.body)
			os.Chtimes(path, mtime, mtime)
			b, err := json.Marshal(mustLoad(t, path))
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(keys(t, b), " "); got != c.keys {
				t.Fatalf("keys\n got %s\nwant %s\nrow: %s", got, c.keys, b)
			}
			var row map[string]any
			json.Unmarshal(b, &row)
			if row["path"] != path {
				t.Errorf("path = %v, want %s", row["path"], path)
			}
			for k, want := range c.vals {
				if g, _ := json.Marshal(row[k]); string(g) != string(must(json.Marshal(want))) {
					t.Errorf("%s = %s, want %v", k, g, want)
				}
			}
		})
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// TestSelect_CwdCanonicalOnBothSides: pad records os.Getwd(), which may
// hold a symlink; --cwd given either way finds both records.
func TestSelect_CwdCanonicalOnBothSides(t *testing.T) {
	dir := padDir(t)
	real := filepath.Join(dir, "real")
	link := filepath.Join(dir, "link")
	os.Mkdir(real, 0o700)
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	self := os.Getpid()
	tok := token(t, self)
	write(t, dir, "1.json", v2(t, self, tok, map[string]any{"cwd": link, "agent": "a"}))
	write(t, dir, "2.json", v2(t, self, tok, map[string]any{"cwd": real + "/", "agent": "b"}))
	write(t, dir, "3.json", v2(t, self, tok, map[string]any{"cwd": dir, "agent": "c"}))
	write(t, dir, "4.json", v2(t, deadPid(t), "1", map[string]any{"cwd": real, "agent": "d"}))
	write(t, dir, "5.json", map[string]any{"pid": self, "cwd": real, "registered_at": "2026-08-20T00:00:00Z", "agent": "a"})
	write(t, dir, "6.json", `{`)
	r := &Registry{Dir: dir}
	entries, err := r.List()
	if err != nil {
		t.Fatal(err)
	}
	agents := func(es []Entry) string {
		var out []string
		for _, e := range es {
			out = append(out, filepath.Base(e.Path))
		}
		return strings.Join(out, " ")
	}
	byPath := func(f Filter) string {
		es := Select(entries, f)
		var names []string
		for _, e := range es {
			names = append(names, strings.TrimSuffix(filepath.Base(e.Path), ".json"))
		}
		return strings.Join(sorted(names), " ")
	}
	for _, c := range []struct {
		f    Filter
		want string
	}{
		{Filter{Cwd: real}, "1 2 5"},
		{Filter{Cwd: link}, "1 2 5"},
		{Filter{Cwd: link + "/../link"}, "1 2 5"},
		{Filter{Cwd: real, All: true}, "1 2 4 5"},
		{Filter{}, "1 2 3 5 6"},
		{Filter{Agent: "a"}, "1"},
		{Filter{Agent: "d", All: true}, "4"},
	} {
		if got := byPath(c.f); got != c.want {
			t.Errorf("Select(%+v) = %s, want %s (listed: %s)", c.f, got, c.want, agents(entries))
		}
	}
}

func sorted(s []string) []string {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s
}

// TestPrune_DeadAlwaysUnknownByAgeAliveNever also checks that a malformed
// record's age is its mtime: a fresh one outlives --older-than 1h.
func TestPrune_DeadAlwaysUnknownByAgeAliveNever(t *testing.T) {
	dir := padDir(t)
	r := &Registry{Dir: dir}
	self := os.Getpid()
	tok := token(t, self)
	notDir := write(t, dir, "plain", "x")
	unknownSock := map[string]any{"messaging_socket_path": filepath.Join(notDir, "s.sock"), "socket_mtime_unix_nano": 1}
	hoursAgo := time.Now().Add(-2 * time.Hour)
	files := map[string]any{
		"1.json": v2(t, self, tok, nil),                                                                     // alive
		"2.json": v2(t, deadPid(t), "1", nil),                                                               // dead
		"3.json": v2(t, self, tok, unknownSock),                                                             // unknown, fresh
		"4.json": with(v2(t, self, tok, unknownSock), "registered_at", hoursAgo.UTC().Format(time.RFC3339)), // unknown, old
		"5.json": `{"pid":1,"x":"` + strings.Repeat("x", MaxSize) + `"}`,                                    // malformed, fresh
		"6.json": `{"pid":`,                                                                                 // malformed, old
		"7.json": `{"pid":1,"x":"` + strings.Repeat("x", MaxSize) + `"}`,                                    // malformed, old
	}
	for name, body := range files {
		write(t, dir, name, body)
	}
	for _, name := range []string{"6.json", "7.json"} {
		os.Chtimes(filepath.Join(dir, name), hoursAgo, hoursAgo)
	}
	left := func() string {
		names, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		var out []string
		for _, n := range names {
			out = append(out, strings.TrimSuffix(filepath.Base(n), ".json"))
		}
		return strings.Join(sorted(out), " ")
	}
	res, err := r.Prune(t.Context(), 0, time.Now())
	if err != nil || res.Dead != 1 || res.Unknown != 0 || res.Kept != 6 || left() != "1 3 4 5 6 7" {
		t.Fatalf("prune = %+v, %v; left %s: want the dead one gone", res, err, left())
	}
	res, err = r.Prune(t.Context(), 3*time.Hour, time.Now())
	if err != nil || res.Unknown != 0 || left() != "1 3 4 5 6 7" {
		t.Fatalf("prune --older-than 3h = %+v, %v; left %s: want all kept", res, err, left())
	}
	res, err = r.Prune(t.Context(), time.Hour, time.Now())
	if err != nil || res.Dead != 0 || res.Unknown != 3 || res.Kept != 3 || left() != "1 3 5" {
		t.Fatalf("prune --older-than 1h = %+v, %v; left %s: want the old unknown ones gone", res, err, left())
	}
	if len(res.Removed) != 3 {
		t.Fatalf("removed rows %v, want 3", paths(res.Removed))
	}
}

// TestPrune_ReChecksBeforeDeleting: a record judged dead that is alive by
// the time it would go (re-registered under the same pid) stays.
func TestPrune_ReChecksBeforeDeleting(t *testing.T) {
	dir := padDir(t)
	r := &Registry{Dir: dir}
	self := os.Getpid()
	path := write(t, dir, "1.json", v2(t, self, "1", nil)) // reused: dead
	alive := v2(t, self, token(t, self), nil)
	beforeRecheck = func(p string) {
		if p == path {
			write(t, dir, "1.json", alive)
		}
	}
	defer func() { beforeRecheck = nil }()
	res, err := r.Prune(t.Context(), 0, time.Now())
	if err != nil || res.Dead != 0 || res.Kept != 1 {
		t.Fatalf("prune = %+v, %v: want the re-registered record kept", res, err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal("the re-registered record was removed")
	}
}

// TestRead_BoundedAtMaxSize: a file of exactly 64 KiB is read; one byte
// more is malformed.
func TestRead_BoundedAtMaxSize(t *testing.T) {
	dir := padDir(t)
	rec := v2(t, os.Getpid(), token(t, os.Getpid()), nil)
	b, _ := json.Marshal(rec)
	pad := strings.Repeat(" ", MaxSize-len(b))
	if e := mustLoad(t, write(t, dir, "1.json", string(b)+pad)); e.Malformed {
		t.Fatalf("a record of exactly 64 KiB is malformed: %s", e.Reason)
	}
	if e := mustLoad(t, write(t, dir, "2.json", string(b)+pad+" ")); !e.Malformed {
		t.Fatal("a record over 64 KiB is not malformed")
	}
}

// TestList_NewestFirst: rows come newest first, ties in path order, as pad
// lists them.
func TestList_NewestFirst(t *testing.T) {
	dir := padDir(t)
	base := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	at := func(d time.Duration) map[string]any {
		return v2(t, deadPid(t), "", map[string]any{"registered_at": base.Add(d).Format(time.RFC3339Nano)})
	}
	write(t, dir, "10.json", at(time.Minute))
	write(t, dir, "11.json", at(3*time.Minute))
	write(t, dir, "12.json", at(2*time.Minute))
	write(t, dir, "13.json", at(2*time.Minute))
	entries, err := (&Registry{Dir: dir}).List()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, filepath.Base(e.Path))
	}
	if want := []string{"11.json", "12.json", "13.json", "10.json"}; !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}
