//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestEtcd_TLSHelperOnlyTrusted: padrun-etcd-tls is taken only from
// beside padrun's own executable, and only when it and its folder are the
// user's or root's and writable by no one else: a helper another user
// owns, one writable by others, or one in a folder others may write, is
// refused (125) and never runs; one in PATH alone is never used. (Taken from PATH, or beside padrun
// unchecked, the planted helper runs.)
func TestEtcd_TLSHelperOnlyTrusted(t *testing.T) {
	requireRoot(t, "plant a helper owned by another user")
	self, err := exec.LookPath("padrun")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ran := filepath.Join(dir, "ran")
	planted := []byte("#!/bin/sh\ntouch " + ran + "\nexit 1\n")
	for _, tc := range []struct {
		name           string
		helper, folder os.FileMode // 0: no helper beside
		inPath         bool
		owner          int // the helper's owner, when not 0
		want           string
	}{
		{"another user's", 0o755, 0o755, false, 65534, "is owned by uid 65534"},
		{"writable by others", 0o777, 0o755, false, 0, "is writable by others"},
		{"folder writable by others", 0o755, 0o777, false, 0, "is writable by others (mode 0777)"},
		{"only in PATH", 0, 0o755, true, 0, "padrun-etcd-tls beside padrun"},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			os.Remove(ran)
			bin := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_"))
			other := bin + ".path"
			if err := os.MkdirAll(other, 0o755); err != nil {
				t.Fatal(err)
			}
			copyFile(t, self, filepath.Join(bin, "padrun"), 0o755)
			if tc.helper != 0 {
				writeMode(t, filepath.Join(bin, "padrun-etcd-tls"), planted, tc.helper)
				if err := os.Chown(filepath.Join(bin, "padrun-etcd-tls"), tc.owner, tc.owner); err != nil {
					t.Fatal(err)
				}
			}
			if tc.inPath {
				writeMode(t, filepath.Join(other, "padrun-etcd-tls"), planted, 0o755)
			}
			if err := os.Chmod(bin, tc.folder); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(filepath.Join(bin, "padrun"), "--etcd", "https://127.0.0.1:1", "--guard", filepath.Join(dir, "s.jsonl"), "--session-key", "tls", "--", "true")
			cmd.Env = append(os.Environ(), "PADRUN_REGISTRY_DIR="+filepath.Join(dir, "reg"), "PATH="+other+":"+os.Getenv("PATH"))
			out, _ := cmd.CombinedOutput()
			if code := cmd.ProcessState.ExitCode(); code != exitFailed || !strings.Contains(string(out), tc.want) {
				t.Errorf("exit %d, want 125 saying %q:\n%s", code, tc.want, out)
			}
			if _, err := os.Stat(ran); err == nil {
				t.Error("the planted helper ran")
			}
		})
	}
}

func writeMode(t *testing.T, path string, b []byte, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	writeMode(t, to, b, mode)
}
