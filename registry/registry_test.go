//go:build linux

package registry

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/padrun/padrun/marker/ident"
)

const helperEnv = "REGISTRY_TEST_HELPER"

// TestHelperProcess is not a test: it is the child that the concurrency
// tests start, as in os/exec's own tests.
func TestHelperProcess(t *testing.T) {
	dir := os.Getenv(helperEnv)
	if dir == "" {
		return
	}
	r := &Registry{Dir: dir}
	log := filepath.Join(dir, "log")
	me := strconv.Itoa(os.Getpid())
	for i := 0; i < 200; i++ {
		err := r.locked(func() error {
			appendLine(log, "enter "+me)
			rec := &Record{SessionPID: 1000 + i%5, Pid: os.Getpid(), ProcStart: ident.Token(me), Agent: strings.Repeat("x", 3000)}
			b, _ := json.Marshal(rec)
			os.WriteFile(filepath.Join(dir, "scratch"), b, 0o600)
			appendLine(log, "exit "+me)
			return nil
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := r.Write(&Record{SessionPID: 1000 + i%5, Pid: os.Getpid(), ProcStart: ident.Token(me)}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	os.Exit(0)
}

func appendLine(path, line string) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		panic(err)
	}
	f.WriteString(line + "\n")
	f.Close()
}

func TestWrite_UnderFolderLock_TwoProcesses(t *testing.T) {
	r, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var cmds []*exec.Cmd
	for i := 0; i < 2; i++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
		cmd.Env = append(os.Environ(), helperEnv+"="+r.Dir)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(filepath.Join(r.Dir, "log"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 800 {
		t.Fatalf("%d log lines, want 800", len(lines))
	}
	for i := 0; i < len(lines); i += 2 {
		enter, exit := strings.TrimPrefix(lines[i], "enter "), strings.TrimPrefix(lines[i+1], "exit ")
		if !strings.HasPrefix(lines[i], "enter ") || enter != exit {
			t.Fatalf("two holders of the folder lock at line %d: %q then %q", i+1, lines[i], lines[i+1])
		}
	}
	entries, err := r.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 5 {
		t.Fatalf("%d records, want 5", len(entries))
	}
	for _, e := range entries {
		if e.Malformed {
			t.Fatalf("%s is malformed: %s", e.Path, e.Reason)
		}
	}
	leftovers, _ := filepath.Glob(filepath.Join(r.Dir, ".*.tmp"))
	if len(leftovers) > 0 {
		t.Fatalf("temp files left: %v", leftovers)
	}
}

func TestOpen_TightensLooseMode(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Fatalf("mode %v, want 0700", fi.Mode().Perm())
	}
}

func TestRemove_OnlyWhileOurs(t *testing.T) {
	r, _ := Open(t.TempDir())
	self := ident.ReadSelf()
	rec := &Record{SessionPID: self.Pid, Pid: self.Pid, ProcStart: ident.Token(self.StartToken)}
	if err := r.Write(rec); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(r.Path(self.Pid)); fi.Mode().Perm() != 0o600 {
		t.Fatalf("record mode %v, want 0600", fi.Mode().Perm())
	}
	// A child's `pad session register` rewrote it: not ours any more.
	os.WriteFile(r.Path(self.Pid), []byte(`{"session_pid":`+strconv.Itoa(self.Pid)+`,"proc_start":"other","pid":1}`), 0o600)
	if err := r.Remove(self.Pid, self.StartToken); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(r.Path(self.Pid)); err != nil {
		t.Fatal("a record that is no longer ours was removed")
	}
	r.Write(rec)
	r.Remove(self.Pid, self.StartToken)
	if _, err := os.Stat(r.Path(self.Pid)); !os.IsNotExist(err) {
		t.Fatal("our record was kept")
	}
}

func TestList_ReadsPadRecords_AndMalformedFiles(t *testing.T) {
	r, _ := Open(t.TempDir())
	self := ident.ReadSelf()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(r.Dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("1.json", `{"session_pid":`+strconv.Itoa(self.Pid)+`,"proc_start":`+self.StartToken+`,"pid":1,"registered_at":"2026-01-01T00:00:00Z","extra":{"kept":true}}`)
	write("2.json", `{"pid":`+strconv.Itoa(self.Pid)+`,"agent":"v1"}`)
	write("3.json", `{"pid":`)
	write("4.json", "{\"pid\":1,\"agent\":\"\xff\"}")
	write("5.json", `{"pid":1,"x":"`+strings.Repeat("x", MaxSize)+`"}`)
	write("6.json", `[]`)
	write(".7.json.abc.tmp", `{"pid":1}`)
	write("notes.json", `{"pid":1}`)
	os.Symlink(filepath.Join(r.Dir, "1.json"), filepath.Join(r.Dir, "8.json"))
	entries, err := r.List()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Entry{}
	for _, e := range entries {
		got[filepath.Base(e.Path)] = e
	}
	if len(got) != 7 {
		t.Fatalf("listed %d files, want 7 (records and malformed, no temp or other names)", len(got))
	}
	if e := got["1.json"]; e.Malformed || e.Liveness != ident.Alive {
		t.Errorf("1.json: %+v, want an alive record", e)
	}
	if e := got["2.json"]; !e.Legacy || e.Liveness != ident.Alive {
		t.Errorf("2.json: %+v, want an alive legacy record", e)
	}
	for _, name := range []string{"3.json", "4.json", "5.json", "6.json", "8.json"} {
		if e := got[name]; !e.Malformed || e.Liveness != ident.Unknown {
			t.Errorf("%s: %+v, want malformed and unknown", name, e)
		}
	}
	b, err := json.Marshal(got["1.json"])
	if err != nil || !strings.Contains(string(b), `"extra":{"kept":true}`) || !strings.Contains(string(b), `"liveness":"alive"`) {
		t.Errorf("JSON of a record = %s, %v: want every field kept, liveness added", b, err)
	}
	b, _ = json.Marshal(got["3.json"])
	var m map[string]any
	if json.Unmarshal(b, &m) != nil || m["malformed"] != true || m["liveness"] != "unknown" || m["registered_at"] == nil || m["path"] == nil {
		t.Errorf("JSON of a malformed file = %s", b)
	}
}

func TestPrune_ReChecksBeforeDeleting(t *testing.T) {
	r, _ := Open(t.TempDir())
	os.WriteFile(filepath.Join(r.Dir, "3.json"), []byte(`{"pid":`), 0o600)
	old := time.Now().Add(-2 * time.Hour)
	os.Chtimes(filepath.Join(r.Dir, "3.json"), old, old)
	res, err := r.Prune(0, time.Now())
	if err != nil || res.Unknown != 0 || res.Kept != 1 {
		t.Fatalf("Prune without --older-than = %+v, %v; want the unknown kept", res, err)
	}
	res, _ = r.Prune(3*time.Hour, time.Now())
	if res.Unknown != 0 {
		t.Fatalf("Prune --older-than 3h removed a 2h-old unknown")
	}
	res, _ = r.Prune(time.Hour, time.Now())
	if res.Unknown != 1 {
		t.Fatalf("Prune --older-than 1h = %+v, want the unknown removed", res)
	}
}
