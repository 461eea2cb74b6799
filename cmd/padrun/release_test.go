//go:build linux

package main

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The release script builds all four targets, static and stamped, with
// checksums; the linux one of this machine's architecture prints its
// stamped version, commit and Go version.
func TestRelease_BuildsStampedBinaries(t *testing.T) {
	if testing.Short() {
		t.Skip("builds four binaries")
	}
	out := t.TempDir()
	cmd := exec.Command("../../.ci/release", out)
	cmd.Env = append(os.Environ(), "VERSION=9.8.7-test")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf(".ci/release: %v\n%s", err, b)
	}
	for _, target := range []string{"linux-amd64", "linux-arm64", "darwin-amd64", "darwin-arm64"} {
		for _, name := range []string{"padrun-9.8.7-test-", "padrun-etcd-tls-9.8.7-test-"} {
			if _, err := os.Stat(filepath.Join(out, name+target)); err != nil {
				t.Errorf("no %s binary for %s: %v", name, target, err)
			}
		}
	}
	sums := exec.Command("sha256sum", "--check", "--strict", "SHA256SUMS")
	sums.Dir = out
	if b, err := sums.CombinedOutput(); err != nil || strings.Count(string(b), ": OK") != 9 {
		t.Errorf("SHA256SUMS: %v\n%s", err, b)
	}
	bin := filepath.Join(out, "padrun-9.8.7-test-linux-"+runtime.GOARCH)
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s is dynamically linked", bin)
		}
	}
	f.Close()
	b, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	head, _ := exec.Command("git", "rev-parse", "HEAD").Output()
	want := "padrun 9.8.7-test (commit " + strings.TrimSpace(string(head))
	if got := string(b); !strings.HasPrefix(got, want) || !strings.Contains(got, ", "+runtime.Version()+", linux/"+runtime.GOARCH+")") {
		t.Errorf("version: %q, want %q... with %s", got, want, runtime.Version())
	}
}
