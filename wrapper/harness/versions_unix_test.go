//go:build unix

package harness

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestResolve_ReleaseUnknown: no package, another package's, a package.json
// that is a symlink or a FIFO (never waited on), or a version that is no
// release: the release is unknown.
func TestResolve_ReleaseUnknown(t *testing.T) {
	check := func(what, bin string) {
		t.Helper()
		env := Env{Getenv: func(k string) string { return map[string]string{"PATH": bin}[k] }, Cwd: "/w/proj", Home: t.TempDir()}
		if p, _ := Resolve("pi", []string{"pi", "--help"}, env); p.Version != "" {
			t.Errorf("%s: version %q, want unknown", what, p.Version)
		}
	}
	check("not installed", t.TempDir())
	check("another package", npmInstall(t, "pi", "left-pad", "1.6.0", "dist/cli.js"))
	check("no release", npmInstall(t, "pi", piPackage, "latest", "dist/cli.js"))
	bin := npmInstall(t, "pi", piPackage, "1.6.0", "dist/cli.js")
	pj := filepath.Join(bin, "..", "lib", "node_modules", piPackage, "package.json")
	real := pj + ".real"
	os.Rename(pj, real)
	os.Symlink(real, pj)
	check("symlinked package.json", bin)
	os.Remove(pj)
	if err := syscall.Mkfifo(pj, 0o644); err != nil {
		t.Fatal(err)
	}
	check("FIFO package.json", bin)
}
