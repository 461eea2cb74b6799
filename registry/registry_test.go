//go:build unix

package registry

import (
	"context"
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
	"github.com/padrun/padrun/supervise/childtest"
)

func TestMain(m *testing.M) { os.Exit(childtest.Main(m, helpers)) }

// helpers are the children the concurrency and lock tests start, each by
// its name; the folder is $REGISTRY_DIR.
var helpers = map[string]func(){
	"write-records": writeRecords,
}

// writeRecords, a helper, takes the folder's lock 200 times, logging its
// entry and exit, and writes a record after each.
func writeRecords() {
	dir := os.Getenv("REGISTRY_DIR")
	r := &Registry{Dir: dir}
	log := filepath.Join(dir, "log")
	me := strconv.Itoa(os.Getpid())
	for i := 0; i < 200; i++ {
		err := r.locked(context.Background(), LockWait, func() error {
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
		rec := &Record{SessionPID: 1000 + i%5, Pid: os.Getpid(), ProcStart: ident.Token(me), Cwd: "/w", RegisteredAt: time.Now().UTC().Format(time.RFC3339Nano)}
		if err := r.Write(context.Background(), rec); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
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
		cmd := childtest.Command("write-records")
		cmd.Env = append(cmd.Env, "REGISTRY_DIR="+r.Dir)
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

func TestRemove_OnlyWhileOurs(t *testing.T) {
	r, _ := Open(t.TempDir())
	ctx := context.Background()
	self := ident.ReadSelf()
	rec := &Record{SessionPID: self.Pid, Pid: self.Pid, ProcStart: self.StartToken}
	if err := r.Write(ctx, rec); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(r.Path(self.Pid)); fi.Mode().Perm() != 0o600 {
		t.Fatalf("record mode %v, want 0600", fi.Mode().Perm())
	}
	// A child's `pad session register` rewrote it: not ours any more.
	os.WriteFile(r.Path(self.Pid), []byte(`{"session_pid":`+strconv.Itoa(self.Pid)+`,"proc_start":"other","pid":1}`), 0o600)
	if err := r.Remove(ctx, self.Pid, string(self.StartToken)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(r.Path(self.Pid)); err != nil {
		t.Fatal("a record that is no longer ours was removed")
	}
	r.Write(ctx, rec)
	r.Remove(ctx, self.Pid, string(self.StartToken))
	if _, err := os.Stat(r.Path(self.Pid)); !os.IsNotExist(err) {
		t.Fatal("our record was kept")
	}
}

// Remove knows our record by the bytes last written, and a record that
// another tool re-encoded (same session pid and start) by its fields.
func TestRemove_OursByBytesOrFields(t *testing.T) {
	r, _ := Open(t.TempDir())
	ctx := context.Background()
	self := ident.ReadSelf()
	rec := &Record{SessionPID: self.Pid, Pid: self.Pid, ProcStart: self.StartToken, Padrun: &Padrun{Version: "v"}}
	for _, reformat := range []bool{false, true} {
		if err := r.Write(ctx, rec); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(r.Path(self.Pid))
		if want, _ := json.MarshalIndent(rec, "", "  "); string(b) != string(want)+"\n" || string(b) != string(r.written[self.Pid]) {
			t.Fatalf("record written as\n%s\nwant json.MarshalIndent's bytes, remembered", b)
		}
		if reformat {
			b, _ := json.Marshal(rec)
			os.WriteFile(r.Path(self.Pid), b, 0o600)
		}
		if err := r.Remove(ctx, self.Pid, string(self.StartToken)); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(r.Path(self.Pid)); !os.IsNotExist(err) {
			t.Fatalf("our record (reformatted: %v) was kept", reformat)
		}
	}
}
