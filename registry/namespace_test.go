//go:build linux

package registry

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/padrun/padrun/marker/ident"
)

// nsRecord writes pid's record as a padrun of the given pid and time
// namespaces wrote it, with start token start, and returns its bytes.
func nsRecord(t *testing.T, r *Registry, pid int, start, pidNS, timeNS, extra string) []byte {
	t.Helper()
	b := []byte(`{"session_pid":` + strconv.Itoa(pid) + `,"proc_start":"` + start + `","pid":` + strconv.Itoa(pid) +
		`,"cwd":"/w","registered_at":"` + time.Now().UTC().Format(time.RFC3339Nano) + `"` + extra +
		`,"padrun":{"version":"0.1.0","session_files":["/w/other.jsonl"],"markers":[],"command":"sh","pid_namespace":"` +
		pidNS + `","time_namespace":"` + timeNS + `"}}`)
	if err := os.WriteFile(r.Path(pid), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return b
}

func ourRecord(pid int) *Record {
	pidNS, timeNS := ident.Namespaces()
	return &Record{SessionPID: pid, ProcStart: "1", Pid: pid, Cwd: "/w", RegisteredAt: time.Now().UTC().Format(time.RFC3339Nano),
		Padrun: &Padrun{Version: "0.1.0", Command: "sh", PidNamespace: pidNS, TimeNamespace: timeNS}}
}

// Pids repeat across pid namespaces, and start tokens read in another time
// namespace are shifted: a record of another namespace at this pid, not
// proven dead, is kept; the write fails with a *TakenError and changes
// nothing.
func TestWrite_OtherNamespacesRecord_Kept(t *testing.T) {
	pidNS, timeNS := ident.Namespaces()
	if timeNS == "" {
		t.Skip("no time namespaces on this kernel")
	}
	pid := os.Getpid()
	for name, ns := range map[string][2]string{"pid": {"1", timeNS}, "time": {pidNS, "1"}} {
		t.Run(name, func(t *testing.T) {
			r, _ := Open(t.TempDir())
			want := nsRecord(t, r, pid, "99999999999", ns[0], ns[1], "")
			err := r.Write(context.Background(), ourRecord(pid))
			var te *TakenError
			if !errors.As(err, &te) || !strings.Contains(te.Error(), "another "+name+" namespace (1), not proven dead") {
				t.Fatalf("Write = %v, want a *TakenError naming another %s namespace", err, name)
			}
			if got, _ := os.ReadFile(r.Path(pid)); string(got) != string(want) {
				t.Fatalf("the record was changed:\n%s", got)
			}
			if err := r.Remove(context.Background(), pid, "99999999999"); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(r.Path(pid)); err != nil {
				t.Fatalf("Remove took another namespace's record: %v", err)
			}
		})
	}
}

// A record of this namespace at the pid is a stale one of a reused pid, or
// this session's own: replaced. One of another namespace proven dead by
// its socket is replaced too.
func TestWrite_SameNamespaceOrProvenDead_Replaced(t *testing.T) {
	pidNS, timeNS := ident.Namespaces()
	pid := os.Getpid()
	r, _ := Open(t.TempDir())
	nsRecord(t, r, pid, "99999999999", pidNS, timeNS, "")
	if err := r.Write(context.Background(), ourRecord(pid)); err != nil {
		t.Fatalf("Write over a stale record of this namespace = %v", err)
	}
	nsRecord(t, r, pid, "99999999999", "1", timeNS, `,"messaging_socket_path":"/nonexistent/1.sock","socket_mtime_unix_nano":1`)
	if err := r.Write(context.Background(), ourRecord(pid)); err != nil {
		t.Fatalf("Write over a dead record of another namespace = %v", err)
	}
}

// ls and prune judge a record of another namespace unknown, never dead: its
// pid is another process here, or its start token was read shifted. The
// same record with no namespaces is a reused pid: dead, pruned.
func TestList_OtherNamespace_UnknownAndKept(t *testing.T) {
	pidNS, timeNS := ident.Namespaces()
	if timeNS == "" {
		t.Skip("no time namespaces on this kernel")
	}
	pid := os.Getpid()
	for name, ns := range map[string][2]string{"pid": {"1", timeNS}, "time": {pidNS, "1"}, "none": {"", ""}} {
		t.Run(name, func(t *testing.T) {
			r, _ := Open(t.TempDir())
			nsRecord(t, r, pid, "99999999999", ns[0], ns[1], "")
			es, err := r.List()
			if err != nil || len(es) != 1 {
				t.Fatalf("List = %v, %v", es, err)
			}
			res, err := r.Prune(context.Background(), 0, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if name == "none" {
				if es[0].Liveness != ident.Dead || res.Dead != 1 {
					t.Fatalf("liveness %s (%s), pruned %d: want dead, pruned", es[0].Liveness, es[0].Reason, res.Dead)
				}
				return
			}
			if es[0].Liveness != ident.Unknown || !strings.Contains(es[0].Reason, "another "+name+" namespace (1), pid "+strconv.Itoa(pid)+" cannot be checked") {
				t.Fatalf("liveness %s (%s), want unknown: another %s namespace", es[0].Liveness, es[0].Reason, name)
			}
			if res.Kept != 1 || len(res.Removed) != 0 {
				t.Fatalf("Prune = %+v, want it kept", res)
			}
		})
	}
}

// A rewrite skips judging only the bytes this Registry wrote there: a
// record of another namespace put in their place after the first write is
// judged, and kept, as at the first.
func TestWrite_Rewrite_JudgesWhatReplacedOurs(t *testing.T) {
	_, timeNS := ident.Namespaces()
	if timeNS == "" {
		t.Skip("no time namespaces on this kernel")
	}
	pid := os.Getpid()
	r, _ := Open(t.TempDir())
	if err := r.Write(context.Background(), ourRecord(pid)); err != nil {
		t.Fatal(err)
	}
	if err := r.Write(context.Background(), ourRecord(pid)); err != nil {
		t.Fatalf("rewrite of our own record = %v", err)
	}
	want := nsRecord(t, r, pid, "99999999999", "1", timeNS, "")
	var te *TakenError
	if err := r.Write(context.Background(), ourRecord(pid)); !errors.As(err, &te) {
		t.Fatalf("rewrite over another namespace's record = %v, want a *TakenError", err)
	}
	if got, _ := os.ReadFile(r.Path(pid)); string(got) != string(want) {
		t.Fatalf("the record was changed:\n%s", got)
	}
}
