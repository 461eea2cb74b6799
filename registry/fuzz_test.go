package registry

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Any file in the registry is listed, as a record or as malformed, and its
// JSON row is valid JSON that keeps path and liveness.
func FuzzLoad(f *testing.F) {
	f.Add([]byte(`{"session_pid":1,"proc_start":"2","pid":1,"agent":"a","registered_at":"2026-11-30T08:00:00Z"}`))
	f.Add([]byte(`{"pid":3,"agent":"v1"}`))
	f.Add([]byte(`{"session_pid":1,"padrun":{"child_pid":2,"session_files":["/a"]},"x":[1,{"y":null}]}`))
	f.Add([]byte("{\"pid\":1,\"agent\":\"\xff\"}"))
	f.Add([]byte(`{ }`))
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
	})
}
