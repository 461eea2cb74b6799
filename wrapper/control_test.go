//go:build linux || darwin || freebsd

package wrapper

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/padrun/padrun/marker"
	"github.com/padrun/padrun/marker/ident"
	"github.com/padrun/padrun/registry"
	"github.com/padrun/padrun/supervise/childtest"
	"github.com/padrun/padrun/wrapper/control"
	"github.com/padrun/padrun/wrapper/harness"
	"github.com/padrun/padrun/wrapper/hook"
)

// testSession is a run's state as Run leaves it once the child started,
// serving its control socket in dir.
func testSession(t *testing.T, dir string) (*session, *controlServer) {
	t.Helper()
	reg, err := registry.Open(filepath.Join(t.TempDir(), "reg"))
	if err != nil {
		t.Fatal(err)
	}
	self := ident.ReadSelf()
	refusal := func(err error) []string {
		var held *marker.HeldError
		if !errors.As(err, &held) {
			return []string{"not a refusal: " + err.Error()}
		}
		return []string{"refused: " + held.File + " is in use by another session", "hint: wait"}
	}
	s := &session{o: Options{Log: zerolog.Nop(), Refusal: refusal}, self: self, reg: reg}
	s.proto = marker.New(self, "", "", time.Now())
	s.proto.Harness = "pi"
	s.rec = &registry.Record{SessionPID: self.Pid, Pid: self.Pid, ProcStart: self.StartToken, Cwd: dir,
		RegisteredAt: time.Now().UTC().Format(time.RFC3339Nano), Padrun: &registry.Padrun{Harness: "pi"}}
	if err := reg.Write(context.Background(), s.rec); err != nil {
		t.Fatal(err)
	}
	ctl, err := startControl(dir, self.Pid, s.handleControl)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctl.stop()
		s.cleanup()
	})
	return s, ctl
}

// ask sends one request on the control socket and reads the reply.
func ask(t *testing.T, path string, req control.Request) control.Reply {
	t.Helper()
	conn, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	json.NewEncoder(conn).Encode(req)
	var r control.Reply
	line, err := bufio.NewReader(conn).ReadBytes('\n')
	if err != nil {
		t.Fatalf("read reply: %v", err)
	}
	if err := json.Unmarshal(line, &r); err != nil {
		t.Fatalf("reply %q: %v", line, err)
	}
	return r
}

func testControlDir(t *testing.T) string {
	t.Helper()
	dir, err := controlDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestControl_ClaimFree_HeldByThisSession(t *testing.T) {
	dir := testControlDir(t)
	s, ctl := testSession(t, dir)
	file := filepath.Join(t.TempDir(), "s.jsonl")
	id := uuid.NewString()
	if r := ask(t, ctl.path, control.Request{Op: "claim", File: file, SessionID: id}); r.Result != "claimed" {
		t.Fatalf("claim: %+v", r)
	}
	m, err := marker.Read(file)
	if err != nil {
		t.Fatal(err)
	}
	if m.Pid != s.self.Pid || m.SessionID != id || m.Tool != "padrun" {
		t.Errorf("marker pid %d session %q tool %q, want pid %d session %q", m.Pid, m.SessionID, m.Tool, s.self.Pid, id)
	}
	b, _ := os.ReadFile(s.reg.Path(s.self.Pid))
	var rec registry.Record
	json.Unmarshal(b, &rec)
	if rec.SessionID != id || len(rec.Padrun.SessionFiles) != 1 || rec.Padrun.SessionFiles[0] != file {
		t.Errorf("record: session %q files %v", rec.SessionID, rec.Padrun.SessionFiles)
	}
	// A second claim of the same file is granted: it is this session's.
	if r := ask(t, ctl.path, control.Request{Op: "claim", File: file}); r.Result != "claimed" {
		t.Fatalf("second claim: %+v", r)
	}
	if r := ask(t, ctl.path, control.Request{Op: "release", File: file}); r.Result != "released" {
		t.Fatalf("release: %+v", r)
	}
	if _, err := os.Stat(marker.Path(file)); !os.IsNotExist(err) {
		t.Errorf("marker still there after release: %v", err)
	}
}

func TestControl_ClaimHeld_Refused(t *testing.T) {
	_, ctl := testSession(t, testControlDir(t))
	file := filepath.Join(t.TempDir(), "s.jsonl")
	self := ident.ReadSelf()
	other := marker.New(self, "", uuid.NewString(), time.Now())
	other.Harness = "pi"
	l, err := marker.TryAcquire(file, other, self) // a second open file: its flock is another holder's
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	r := ask(t, ctl.path, control.Request{Op: "claim", File: file})
	if r.Result != "refused" || r.Verdict == "" || len(r.Lines) != 2 {
		t.Fatalf("claim of a held file: %+v", r)
	}
	if want := "padrun: refused: " + file + " is in use by another session"; r.Lines[0] != want {
		t.Errorf("first line %q, want %q", r.Lines[0], want)
	}
	if r.Lines[1] != "padrun: hint: wait" {
		t.Errorf("last line %q is not the hint", r.Lines[1])
	}
}

// A file met only once the child runs (claude -c inside a session whose
// file its harness had not written yet when the nested run began) and held
// by the run's own outer session is that session's: the refusal says so,
// and waiting for it is no way out, as for a file known at the start.
func TestControl_ClaimHeldByOuterSession_IsHeldOuter(t *testing.T) {
	s, ctl := testSession(t, testControlDir(t))
	s.parent = s.self.Pid // the outer session's padrun: PAD_SESSION_PID
	file := filepath.Join(t.TempDir(), "s.jsonl")
	outer := marker.New(s.self, "", uuid.NewString(), time.Now())
	outer.Harness = "claude"
	l, err := marker.TryAcquire(file, outer, s.self)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	var kinds []marker.HeldKind
	s.o.Refusal = func(err error) []string {
		var held *marker.HeldError
		if errors.As(err, &held) {
			kinds = append(kinds, held.Kind)
		}
		return []string{"refused"}
	}
	if r := ask(t, ctl.path, control.Request{Op: "claim", File: file, Wait: true}); r.Result != "refused" {
		t.Fatalf("claim of the outer session's file: %+v", r)
	}
	if len(kinds) != 1 || kinds[0] != marker.HeldOuter {
		t.Errorf("refusal kinds %v, want [%v] (HeldOuter)", kinds, marker.HeldOuter)
	}
}

func TestControl_BadRequests_AreErrors(t *testing.T) {
	_, ctl := testSession(t, testControlDir(t))
	for _, req := range []control.Request{{Op: "claim"}, {Op: "claim", File: "rel.jsonl"}, {Op: "unlock", File: "/x"}} {
		if r := ask(t, ctl.path, req); r.Result != "error" || r.Error == "" {
			t.Errorf("%+v: %+v", req, r)
		}
	}
	if r := ask(t, ctl.path, control.Request{Op: "hello"}); r.Result != "ok" || r.Pid != os.Getpid() {
		t.Errorf("hello: %+v", r)
	}
}

func TestControl_SocketAndFolderModes_RemovedAtStop(t *testing.T) {
	dir := testControlDir(t)
	s, ctl := testSession(t, dir)
	if fi, _ := os.Lstat(dir); fi.Mode().Perm() != 0o700 || !fi.IsDir() {
		t.Errorf("folder %s: %v, want a 0700 folder", dir, fi.Mode())
	}
	fi, err := os.Lstat(ctl.path)
	if err != nil || fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket %s: %v %v, want a 0600 socket", ctl.path, fi.Mode(), err)
	}
	if ctl.path != control.Path(dir, s.self.Pid) || filepath.Base(ctl.path) != strconv.Itoa(os.Getpid())+".sock" {
		t.Errorf("socket %s is not named by the session pid", ctl.path)
	}
	ctl.stop()
	if _, err := os.Lstat(ctl.path); !os.IsNotExist(err) {
		t.Errorf("socket left after stop: %v", err)
	}
}

func TestControlDir_RefusesUnsafeFolders(t *testing.T) {
	rt := t.TempDir()
	dir := filepath.Join(rt, "padrun")
	os.Mkdir(dir, 0o700)
	os.Chmod(dir, 0o770)
	if _, err := controlDir(rt); err == nil || !strings.Contains(err.Error(), "mode") {
		t.Errorf("group-writable folder: %v", err)
	}
	os.Remove(dir)
	target := t.TempDir()
	os.Symlink(target, dir)
	if _, err := controlDir(rt); err == nil || !strings.Contains(err.Error(), "not a folder") {
		t.Errorf("symlinked folder: %v", err)
	}
	os.Remove(dir)
	if d, err := controlDir(rt); err != nil || d != dir {
		t.Errorf("fresh folder: %q %v", d, err)
	}
	if os.Getuid() == 0 {
		os.Chown(dir, 65534, 65534)
		if _, err := controlDir(rt); err == nil || !strings.Contains(err.Error(), "belongs to uid 65534") {
			t.Errorf("another user's folder: %v", err)
		}
	}
}

func TestWriteCompanion_ContentAddressed_NeverThroughSymlink(t *testing.T) {
	dir := testControlDir(t)
	pi, _ := harness.Lookup("pi")
	piCompanion := pi.Companion.Script()
	p, err := writeCompanion(dir, "pi-companion", ".js", piCompanion)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(p); fi.Mode().Perm() != 0o600 || !fi.Mode().IsRegular() {
		t.Errorf("%s: %v, want a 0600 file", p, fi.Mode())
	}
	// Replaced, never written through: a symlink under its name.
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("keep"), 0o600)
	os.Remove(p)
	os.Symlink(victim, p)
	if p2, err := writeCompanion(dir, "pi-companion", ".js", piCompanion); err != nil || p2 != p {
		t.Fatalf("rewrite: %q %v", p2, err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("the symlink's target was written: %q", b)
	}
	if b, _ := os.ReadFile(p); string(b) != string(piCompanion) {
		t.Errorf("companion content differs")
	}
	// Another content gets another name.
	if p3, _ := writeCompanion(dir, "pi-companion", ".js", []byte("other")); p3 == p {
		t.Errorf("another content has the same name %s", p3)
	}
}

// TestControl_OtherUID_Rejected connects as another user (root, setpriv):
// the socket answers with an error and claims nothing.
func TestControl_OtherUID_Rejected(t *testing.T) {
	helperEnv := childtest.Env("control-client")
	setpriv, err := exec.LookPath("setpriv")
	if os.Getuid() != 0 || err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("this test needs root and setpriv in CI")
		}
		t.Skip("needs root and setpriv(1) to connect as another user")
	}
	// The folder is opened to others for this test only, so that the peer
	// check is what refuses them.
	dir, err := os.MkdirTemp("", "padrun-control")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	_, ctl := testSession(t, dir)
	os.Chmod(ctl.path, 0o666)
	file := filepath.Join(t.TempDir(), "s.jsonl")
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", os.Args[0])
	cmd.Env = append(os.Environ(), helperEnv, "PADRUN_CONTROL_CLIENT="+ctl.path, "PADRUN_CONTROL_FILE="+file)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("client: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), `"result":"error"`) || !strings.Contains(string(out), "uid 65534 may not use") {
		t.Errorf("another uid was answered: %s", out)
	}
	if _, err := os.Stat(marker.Path(file)); !os.IsNotExist(err) {
		t.Errorf("a marker was written for another uid's claim: %v", err)
	}
}

func TestMain(m *testing.M) {
	os.Exit(childtest.Main(m, map[string]func(){"control-client": controlClient}))
}

// controlClient, the helper of TestControl_OtherUID_Rejected, claims
// $PADRUN_CONTROL_FILE through the socket $PADRUN_CONTROL_CLIENT and
// prints the reply.
func controlClient() {
	conn, err := net.Dial("unix", os.Getenv("PADRUN_CONTROL_CLIENT"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer conn.Close()
	json.NewEncoder(conn).Encode(control.Request{Op: "claim", File: os.Getenv("PADRUN_CONTROL_FILE")})
	line, _ := bufio.NewReader(conn).ReadString('\n')
	os.Stdout.WriteString(line)
}

func TestClaudeHook_ClaimsSilently_RefusalEndsTheHarness(t *testing.T) {
	s, ctl := testSession(t, testControlDir(t))
	env := EnvFrom([]string{"PADRUN_CONTROL=" + ctl.path, "PAD_SESSION_PID=" + strconv.Itoa(s.self.Pid)})
	killed := 0
	s.kill = func() { killed++ }
	dir := t.TempDir()
	first, second, held := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl"), filepath.Join(dir, "held.jsonl")
	run := func(file string) (int, string) {
		var stderr strings.Builder
		in := `{"session_id":"` + uuid.NewString() + `","transcript_path":"` + file + `","hook_event_name":"SessionStart","source":"clear"}`
		return hook.Claude("claude", strings.NewReader(in), &stderr, env.ControlClient()), stderr.String()
	}
	if code, out := run(first); code != 0 || out != "" {
		t.Fatalf("claim: exit %d, stderr %q", code, out)
	}
	// /clear: the new transcript is claimed, the old one released.
	if code, _ := run(second); code != 0 {
		t.Fatalf("second claim: exit %d", code)
	}
	if _, err := os.Stat(marker.Path(first)); !os.IsNotExist(err) {
		t.Errorf("the transcript claude left is still held: %v", err)
	}
	if _, err := os.Stat(marker.Path(second)); err != nil {
		t.Errorf("the new transcript is not held: %v", err)
	}
	other := marker.New(s.self, "", uuid.NewString(), time.Now())
	l, err := marker.TryAcquire(held, other, s.self)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	code, out := run(held)
	if code != 2 || !strings.Contains(out, "padrun: refused: "+held) || killed != 1 {
		t.Errorf("held: exit %d, killed %d, stderr %q", code, killed, out)
	}
	if !marker.IsHeld(s.stopped) {
		t.Errorf("padrun does not exit with the refusal: %v", s.stopped)
	}
}
