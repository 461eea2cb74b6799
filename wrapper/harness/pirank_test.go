package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// piFile writes a pi session file with the given lines and mtime.
func piFile(t *testing.T, dir, name string, mtime time.Time, lines ...string) string {
	t.Helper()
	os.MkdirAll(dir, 0o700)
	path := filepath.Join(dir, name)
	body := ""
	for _, l := range lines {
		body += l + "\n"
	}
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(path, mtime, mtime)
	return path
}

const (
	hdr = `{"type":"session","id":"%s","timestamp":"%s"}`
	msg = `{"type":"message","id":"m","parentId":null,"timestamp":"%s","message":{"role":"%s","content":"x"%s}}`
)

func line(format string, a ...any) string { return fmt.Sprintf(format, a...) }

func TestPiPrefix_RankedByLastActivityNotMtime(t *testing.T) {
	dir := t.TempDir()
	old, recent := time.Now().Add(-2*time.Hour), time.Now()
	// a: older mtime, newer activity (an entry's ISO timestamp); b: the reverse.
	a := piFile(t, dir, "1_a.jsonl", old, line(hdr, "0190abcd-1", "2026-01-01T00:00:00Z"), line(msg, "2026-03-01T00:00:00Z", "user", ""))
	piFile(t, dir, "2_b.jsonl", recent, line(hdr, "0190abcd-2", "2026-01-01T00:00:00Z"), line(msg, "2026-02-01T00:00:00Z", "assistant", ""))
	if got := piFindID(dir, "0190abcd"); got != a {
		t.Fatalf("picked %s, want %s (latest activity)", got, a)
	}
}

func TestPiPrefix_MessageTimestampBeatsEntryTimestamp(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	// a's message carries a numeric timestamp (ms) later than b's entry time.
	a := piFile(t, dir, "1_a.jsonl", now, line(hdr, "p-1", "2026-01-01T00:00:00Z"), line(msg, "2020-01-01T00:00:00Z", "user", `,"timestamp":1780000000000`))
	piFile(t, dir, "2_b.jsonl", now, line(hdr, "p-2", "2026-01-01T00:00:00Z"), line(msg, "2026-01-02T00:00:00Z", "user", ""))
	if got := piFindID(dir, "p-"); got != a {
		t.Fatalf("picked %s, want %s", got, a)
	}
}

func TestPiPrefix_NoActivityFallsBackToHeaderThenMtime(t *testing.T) {
	dir := t.TempDir()
	// Neither has a user or assistant message: the header's time decides,
	// not the mtime (b is newer on disk). Custom entries are no activity.
	a := piFile(t, dir, "1_a.jsonl", time.Now().Add(-time.Hour), line(hdr, "q-1", "2026-05-01T00:00:00Z"), line(msg, "2027-01-01T00:00:00Z", "toolResult", ""))
	piFile(t, dir, "2_b.jsonl", time.Now(), line(hdr, "q-2", "2026-04-01T00:00:00Z"))
	if got := piFindID(dir, "q-"); got != a {
		t.Fatalf("picked %s, want %s (header time)", got, a)
	}
	// Without a header time: mtime.
	dir2 := t.TempDir()
	piFile(t, dir2, "1_a.jsonl", time.Now().Add(-time.Hour), `{"type":"session","id":"r-1"}`)
	b := piFile(t, dir2, "2_b.jsonl", time.Now(), `{"type":"session","id":"r-2"}`)
	if got := piFindID(dir2, "r-"); got != b {
		t.Fatalf("picked %s, want %s (mtime)", got, b)
	}
}

func TestPiPrefix_TiesKeepNameOrder(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	a := piFile(t, dir, "1_a.jsonl", now, line(hdr, "t-1", "2026-01-01T00:00:00.000Z"))
	piFile(t, dir, "2_b.jsonl", now.Add(time.Hour), line(hdr, "t-2", "2026-01-01T00:00:00.0004Z")) // same ms
	if got := piFindID(dir, "t-"); got != a {
		t.Fatalf("picked %s, want %s (first by name on a tie)", got, a)
	}
}

func TestPiPrefix_SkipsBadLinesAndNonSessions(t *testing.T) {
	dir := t.TempDir()
	a := piFile(t, dir, "1_a.jsonl", time.Now(), "garbage", line(hdr, "s-1", "2026-01-01T00:00:00Z"))
	piFile(t, dir, "2_b.jsonl", time.Now(), `{"type":"message","id":"s-2"}`, line(hdr, "s-2", "2027-01-01T00:00:00Z"))
	if got := piFindID(dir, "s-"); got != a {
		t.Fatalf("picked %s, want %s: a file whose first line is not the header is no session", got, a)
	}
}

func TestPiPrefix_GlobalRanksAcrossProjects(t *testing.T) {
	agent := t.TempDir()
	piFile(t, filepath.Join(agent, "sessions", "--a--"), "x.jsonl", time.Now(), line(hdr, "g-1", "2026-01-01T00:00:00Z"))
	b := piFile(t, filepath.Join(agent, "sessions", "--b--"), "x.jsonl", time.Now().Add(-time.Hour), line(hdr, "g-2", "2026-06-01T00:00:00Z"))
	if got := piFindIDAnywhere(agent, "g-"); got != b {
		t.Fatalf("picked %s, want %s: every project ranked together", got, b)
	}
}
