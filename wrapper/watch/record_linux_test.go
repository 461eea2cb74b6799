package watch

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/padrun/padrun/wrapper/harness"
)

// clineWatch is cline's: a folder per session, its messages written whole
// and closed at once, and beside them the record of their writer.
func clineWatch(dir string) harness.Watch {
	return harness.Watch{Dir: dir, Depth: 1, Pattern: "*.messages.json", Record: "*.json"}
}

// writeSession writes a session as cline does: the folder, its messages,
// then (when pid > 0) the record naming its writer; nothing stays open.
func writeSession(t *testing.T, dir, id string, pid int) {
	t.Helper()
	d := filepath.Join(dir, id)
	if err := os.MkdirAll(d, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, id+".messages.json"), []byte(`{"messages":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if pid > 0 {
		writeRecord(t, dir, id, pid)
	}
}

func writeRecord(t *testing.T, dir, id string, pid int) {
	t.Helper()
	rec := fmt.Sprintf(`{"version":1,"session_id":%q,"pid":%d,"status":"running"}`, id, pid)
	if err := os.WriteFile(filepath.Join(dir, id, id+".json"), []byte(rec), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestWatch_Record_ProvesAFileWrittenWhole(t *testing.T) {
	dir := t.TempDir()
	w, got, read := drivenWatch(t, clineWatch(dir))
	writeSession(t, dir, "s1", os.Getpid())
	read()
	if strings.Join(got.claimed, " ") != "s1/s1.messages.json" || len(got.unowned) > 0 {
		t.Fatalf("claimed %q, unowned %q; want s1/s1.messages.json claimed by its record", got.claimed, got.unowned)
	}
	if len(w.pending) > 0 {
		t.Fatalf("pending %v", w.pending)
	}
}

func TestWatch_Record_WrittenLater_JudgesThePendingFile(t *testing.T) {
	dir := t.TempDir()
	w, got, read := drivenWatch(t, clineWatch(dir))
	writeSession(t, dir, "s2", 0)
	read()
	if len(got.claimed) > 0 || len(w.pending) != 1 {
		t.Fatalf("claimed %q, pending %v; want s2 pending: nothing names its writer yet", got.claimed, w.pending)
	}
	writeRecord(t, dir, "s2", os.Getpid())
	read()
	if strings.Join(got.claimed, " ") != "s2/s2.messages.json" || len(w.pending) > 0 {
		t.Fatalf("claimed %q, pending %v; want s2 claimed once its record names the run's tree", got.claimed, w.pending)
	}
}

func TestWatch_Record_OfAnotherProcess_LeavesTheFile(t *testing.T) {
	dir := t.TempDir()
	_, got, read := drivenWatch(t, clineWatch(dir))
	writeSession(t, dir, "s3", 1)
	read()
	if len(got.claimed) > 0 || strings.Join(got.unowned, " ") != "s3/s3.messages.json: "+WhyForeign {
		t.Fatalf("claimed %q, unowned %q; want s3 left as another process's", got.claimed, got.unowned)
	}
}

// A record another user planted proves nothing: the file stays pending.
func TestWatch_Record_PlantedByAnotherUser_ProvesNothing(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to give the record to another user")
	}
	dir := t.TempDir()
	w, got, read := drivenWatch(t, clineWatch(dir))
	writeSession(t, dir, "s4", os.Getpid())
	if err := os.Chown(filepath.Join(dir, "s4", "s4.json"), 65534, 65534); err != nil {
		t.Fatal(err)
	}
	read()
	if len(got.claimed) > 0 || len(got.unowned) > 0 || len(w.pending) != 1 {
		t.Fatalf("claimed %q, unowned %q, pending %v; want s4 pending", got.claimed, got.unowned, w.pending)
	}
}
