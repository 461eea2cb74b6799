package ident

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// A temp name is never a marker's or a record's: readers would take a
// half-written file for one (docs/spec.md §5 step 4, §6).
func TestTempName_NeverAMarkerOrRecord(t *testing.T) {
	record := regexp.MustCompile(`^[0-9]+\.json$`)
	for range 100 {
		n := TempName()
		if record.MatchString(n) || filepath.Ext(n) == ".json" || len(n) > 80 {
			t.Fatalf("temp name %q may be read as a record or marker, or is long", n)
		}
	}
}

// Only a temp file of a writer proven dead here is reclaimed: never a live
// one (this process), one of another boot, machine or namespace, or a name
// that is not a temp name of this form.
func TestTempDead_OnlyProvenDeadWriters(t *testing.T) {
	token, here := writer()
	if here == "" || token == "" {
		t.Skip("no boot id or start token here")
	}
	pid := strconv.Itoa(os.Getpid())
	for name, want := range map[string]bool{
		TempName(): false, // alive: this process
		".padrun-" + pid + "-1-" + here + "-00.tmp":   true,  // pid reused
		".padrun-" + pid + "-1-0123456789ab-00.tmp":   false, // another boot, machine or namespace: its pid means another process
		".padrun-" + pid + "--" + here + "-00.tmp":    false, // alive, unverified
		".padrun-0-1-" + here + "-00.tmp":             false,
		".padrun-74faed1d0265.tmp":                    false, // an older padrun's: no writer in it
		"." + pid + ".json.2050c9af.tmp":              false,
		".padrun-" + pid + "-1-" + here + "-00.tmp.x": false,
	} {
		if got := tempDead(name); got != want {
			t.Errorf("TempDead(%q) = %v, want %v", name, got, want)
		}
	}
}

// ReclaimTemps removes the dead writers' regular files and nothing else.
func TestReclaimTemps(t *testing.T) {
	_, here := writer()
	if here == "" {
		t.Skip("no boot id here")
	}
	dir := t.TempDir()
	dead := ".padrun-" + strconv.Itoa(os.Getpid()) + "-1-" + here + "-00.tmp"
	live, link := TempName(), ".padrun-"+strconv.Itoa(os.Getpid())+"-2-"+here+"-00.tmp"
	for _, n := range []string{dead, live, "s.jsonl"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("s.jsonl", filepath.Join(dir, link)); err != nil {
		t.Fatal(err)
	}
	if n := ReclaimTemps(dir); n != 1 {
		t.Errorf("reclaimed %d, want 1", n)
	}
	for n, want := range map[string]bool{dead: false, live: true, link: true, "s.jsonl": true} {
		if _, err := os.Lstat(filepath.Join(dir, n)); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", n, err == nil, want)
		}
	}
}
