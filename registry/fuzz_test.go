package registry

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/padrun/padrun/marker/ident"
)

// Any regular file in the registry is listed, as a record or as malformed,
// and its JSON row is valid JSON in pad's SessionRecord shape (plus
// padrun's object) with a path and a liveness; a malformed one's time, its
// mtime, is never zero.
// padKeys are pad's SessionRecord keys, and padrun's object.
const padKeys = " session_pid session_pid_source session_pid_verified agent cwd session_id liveness registered_at legacy malformed messaging_socket_path path padrun "

func FuzzLoad(f *testing.F) {
	f.Add([]byte(`{"session_pid":1,"proc_start":"2","pid":1,"agent":"a","registered_at":"2026-11-30T08:00:00Z"}`))
	f.Add([]byte(`{"pid":3,"agent":"v1"}`))
	f.Add([]byte(`{"session_pid":1,"padrun":{"child_pid":2,"session_files":["/a"]},"x":[1,{"y":null}]}`))
	f.Add([]byte("{\"pid\":1,\"agent\":\"\xff\"}"))
	f.Add([]byte(`{ }`))
	f.Add([]byte(`{"pid":7,"cwd":"/w","registered_at":"2026-08-20T00:00:00Z","messaging_socket_path":"/run/7.sock"}`))
	f.Add([]byte(`{"session_pid":1,"pid":1,"cwd":"/w","registered_at":"2026-08-20T00:00:00Z","proc_start":5}`))
	f.Add([]byte(`null`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(dir, "999999999.json")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		e, ok := load(path)
		if !ok {
			t.Fatalf("a regular file %q is not listed", b)
		}
		out, err := json.Marshal(e)
		if err != nil {
			t.Fatalf("row of %q does not encode: %v", b, err)
		}
		var row map[string]any
		if err := json.Unmarshal(out, &row); err != nil {
			t.Fatalf("row of %q is not JSON: %s", b, out)
		}
		if row["path"] != path || row["liveness"] == nil {
			t.Fatalf("row of %q lacks path or liveness: %s", b, out)
		}
		for k := range row {
			if !strings.Contains(padKeys, " "+k+" ") {
				t.Fatalf("row of %q has key %q, not pad's: %s", b, k, out)
			}
		}
		if ts, _ := row["registered_at"].(string); e.Malformed && (strings.HasPrefix(ts, "0001-") || e.Time.IsZero()) {
			t.Fatalf("malformed row of %q has no time: %s", b, out)
		}
	})
}

// The record's own encoder writes exactly the bytes json.MarshalIndent
// writes, for every value of every field: escaping, invalid UTF-8,
// omitempty, nil and empty lists, no padrun object.
func FuzzEncode(f *testing.F) {
	f.Add(1, "self", true, "77", "id", "pi", 1, "/w", "2026-11-30T08:00:00.1Z", true, "0.1.0", "pi", "print", "/a\x00/b", 2, 0, "9", 0, "pi")
	f.Add(0, "", false, "", "", "", -3, "", "", false, "", "", "", "", 0, 0, "", 0, "")
	f.Add(0, "<&>", false, "\u2028", "\xff", "\"\\", 0, "", "", true, "", "", "", "", -1, 1, "", 7, "")
	f.Fuzz(func(t *testing.T, spid int, source string, verified bool, start, id, agent string, pid int, cwd, at string,
		padrun bool, version, harness, mode, files string, nfiles, nmarkers int, cstart string, cpid int, command string) {
		rec := Record{SessionPID: spid, SessionPIDSource: source, SessionPIDVerified: verified, ProcStart: ident.Token(start),
			SessionID: id, Agent: agent, Pid: pid, Cwd: cwd, RegisteredAt: at}
		if padrun {
			rec.Padrun = &Padrun{Version: version, Harness: harness, Mode: mode, ChildPid: cpid,
				ChildProcStart: ident.Token(cstart), ParentSessionPid: spid ^ pid, Command: command,
				PidNamespace: harness, TimeNamespace: mode}
			rec.Padrun.SessionFiles = list(files, nfiles)
			rec.Padrun.Markers = list(files+".live.json", nmarkers)
			rec.Padrun.WaitingFor = list(cwd+files, nmarkers-nfiles) // omitted when nil or empty
		}
		want, err := json.MarshalIndent(&rec, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if got := rec.encode(); string(got) != string(want) {
			t.Fatalf("encode:\n%s\njson.MarshalIndent:\n%s", got, want)
		}
	})
}

// list is nil for n < 0, else n copies of s, each with its index.
func list(s string, n int) []string {
	if n < 0 {
		return nil
	}
	out := []string{}
	for i := range n % 4 {
		out = append(out, s+strings.Repeat("x", i))
	}
	return out
}
