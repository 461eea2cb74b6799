package wrapper

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/padrun/padrun/wrapper/control"
	"github.com/padrun/padrun/wrapper/harness"
)

// TestSessionFolders_OwnRealFolder: the folder of a database session's
// guards is created 0700 beside the database (the database's folder too,
// before the harness first ran), and a symlink or a folder others can
// write there is refused, never used or repaired.
func TestSessionFolders_OwnRealFolder(t *testing.T) {
	dir := t.TempDir()
	guard := harness.SessionGuard(filepath.Join(dir, "data", "opencode.db"), "ses_1")
	if err := sessionFolders(guard); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(filepath.Dir(guard))
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("guard folder %v, %v: want a 0700 folder", fi, err)
	}
	if _, err := os.Lstat(guard); !os.IsNotExist(err) {
		t.Errorf("the guard itself was created: %v", err)
	}

	elsewhere := t.TempDir()
	link := harness.SessionGuard(filepath.Join(dir, "link", "opencode.db"), "ses_1")
	os.MkdirAll(filepath.Dir(filepath.Dir(link)), 0o700)
	if err := os.Symlink(elsewhere, filepath.Dir(link)); err != nil {
		t.Fatal(err)
	}
	if err := sessionFolders(link); err == nil {
		t.Error("a symlinked guard folder is used")
	}

	open := harness.SessionGuard(filepath.Join(dir, "open", "opencode.db"), "ses_1")
	os.MkdirAll(filepath.Dir(open), 0o700)
	os.Chmod(filepath.Dir(open), 0o777)
	if err := sessionFolders(open); err == nil {
		t.Error("a guard folder others can write is used")
	}
	if fi, _ := os.Lstat(filepath.Dir(open)); fi.Mode().Perm() != 0o777 {
		t.Errorf("padrun changed a folder it did not create: %v", fi.Mode())
	}

	// A path that names no session of a database is the marker's business.
	if err := sessionFolders(filepath.Join(elsewhere, "s.jsonl")); err != nil {
		t.Error(err)
	}
}

// TestControl_ClaimSession_GuardFolderChecked: a companion's claim of a
// database session creates the guard's folder 0700 and holds the session
// by its guard; through a symlinked folder it is an error, never a claim.
func TestControl_ClaimSession_GuardFolderChecked(t *testing.T) {
	_, ctl := testSession(t, testControlDir(t))
	db := filepath.Join(t.TempDir(), "opencode.db")
	guard := harness.SessionGuard(db, "ses_1")
	if r := ask(t, ctl.path, control.Request{Op: "claim", File: guard, SessionID: "ses_1"}); r.Result != "claimed" {
		t.Fatalf("claim: %+v", r)
	}
	if fi, err := os.Lstat(filepath.Dir(guard)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("guard folder %v, %v", fi, err)
	}
	if _, err := os.Lstat(guard + ".live.json"); err != nil {
		t.Errorf("no marker beside the guard: %v", err)
	}

	linked := filepath.Join(t.TempDir(), "opencode.db")
	os.Symlink(t.TempDir(), filepath.Dir(harness.SessionGuard(linked, "x")))
	if r := ask(t, ctl.path, control.Request{Op: "claim", File: harness.SessionGuard(linked, "ses_2")}); r.Result != "error" {
		t.Errorf("claim through a symlinked guard folder: %+v", r)
	}
}
