package registry

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
