//go:build unix

package registry

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// mode is a folder's mode as chmod(1) writes it, special bits included.
func mode(t *testing.T, dir string) string {
	t.Helper()
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%04o", uint32(fi.Mode().Perm())|specialBits(fi.Mode()))
}

func mkdir(t *testing.T, dir string, perm os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, perm); err != nil { // past the umask
		t.Fatal(err)
	}
}

// TestOpen_FolderRules: the default folder is created 0700 and tightened
// when it is the user's and looser; any other folder padrun did not create
// is never chmod'ed, and refused when group or others can write it.
func TestOpen_FolderRules(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	def := filepath.Join(home, ".pad", "sessions")
	other := filepath.Join(t.TempDir(), "shared")
	cases := []struct {
		name    string
		dir     string
		perm    os.FileMode // 0: missing
		refused bool
		after   string
	}{
		{"default, missing: created 0700", def, 0, false, "0700"},
		{"default, 0755: tightened", def, 0o755, false, "0700"},
		{"default, 1777: tightened", def, 0o777 | os.ModeSticky, false, "0700"},
		{"default, 0500: set to 0700 as pad does", def, 0o500, false, "0700"},
		{"other, missing: created 0700", other, 0, false, "0700"},
		{"other, 0755: kept as is", other, 0o755, false, "0755"},
		{"other, 0700: kept", other, 0o700, false, "0700"},
		{"other, 0775: refused, unchanged", other, 0o775, true, "0775"},
		{"other, 0757: refused, unchanged", other, 0o757, true, "0757"},
		{"other, sticky 1777 like /tmp: refused, unchanged", other, 0o777 | os.ModeSticky, true, "1777"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			os.RemoveAll(c.dir)
			if c.perm != 0 {
				mkdir(t, c.dir, c.perm)
			}
			_, err := Open(c.dir)
			var fe *FolderError
			if c.refused != errors.As(err, &fe) {
				t.Fatalf("Open = %v, want refused %v", err, c.refused)
			}
			if !c.refused && err != nil {
				t.Fatal(err)
			}
			if got := mode(t, c.dir); got != c.after {
				t.Fatalf("mode after %s, want %s", got, c.after)
			}
		})
	}
}

// TestOpen_FolderOfAnotherUser_Refused: a folder the user does not own is
// refused and never chmod'ed, whatever its mode; the default folder of
// another user is not tightened either.
func TestOpen_FolderOfAnotherUser_Refused(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("needs root to give a folder to another user (CI runs as root)")
		}
		t.Skip("needs root to give a folder to another user")
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	const nobody = 65534
	other := filepath.Join(t.TempDir(), "theirs")
	mkdir(t, other, 0o700)
	if err := os.Chown(other, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	var fe *FolderError
	if _, err := Open(other); !errors.As(err, &fe) {
		t.Fatalf("Open of another user's folder = %v, want refused", err)
	}
	def := filepath.Join(home, ".pad", "sessions")
	mkdir(t, def, 0o755)
	os.Chown(def, nobody, nobody)
	if _, err := Open(def); err != nil {
		t.Fatalf("Open of another user's default folder, not writable by others: %v", err)
	}
	if got := mode(t, def); got != "0755" {
		t.Fatalf("another user's default folder became %s", got)
	}
	os.Chmod(def, 0o777)
	if _, err := Open(def); !errors.As(err, &fe) {
		t.Fatalf("Open of another user's default folder writable by all = %v, want refused", err)
	}
	if got := mode(t, def); got != "0777" {
		t.Fatalf("another user's default folder became %s", got)
	}
}

// TestOpen_Symlink_RefusedNeverChmoded: the registry folder is the one
// named: a symlink there is refused, and its target keeps its mode, even
// as the default folder, which a real folder of the user's would have
// been tightened.
func TestOpen_Symlink_RefusedNeverChmoded(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	target := filepath.Join(t.TempDir(), "target")
	mkdir(t, target, 0o755)
	os.MkdirAll(filepath.Join(home, ".pad"), 0o700)
	def := filepath.Join(home, ".pad", "sessions")
	if err := os.Symlink(target, def); err != nil {
		t.Fatal(err)
	}
	var fe *FolderError
	if _, err := Open(def); !errors.As(err, &fe) {
		t.Fatalf("Open of a symlinked default folder = %v, want refused", err)
	}
	if got := mode(t, target); got != "0755" {
		t.Fatalf("the symlink's target became %s", got)
	}
	if _, err := os.Lstat(filepath.Join(target, ".lock")); err == nil {
		t.Fatal("the symlink's target got a .lock")
	}
}
