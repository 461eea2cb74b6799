//go:build unix

package harness

import (
	"os"
	"path/filepath"
	"runtime"
	"syscall"
)

// geminiSystemSettings is getSystemSettingsPath's default.
var geminiSystemSettings = map[bool]string{true: "/Library/Application Support/GeminiCli/settings.json", false: "/etc/gemini-cli/settings.json"}[runtime.GOOS == "darwin"]

// geminiRootOnly is gemini 0.61's test of a system settings file: the file
// and every folder above it owned by root and writable by no group or other.
func geminiRootOnly(path string) bool {
	for p := path; ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			return false
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok || st.Uid != 0 || fi.Mode().Perm()&0o022 != 0 {
			return false
		}
		if p == filepath.Dir(p) {
			return true
		}
	}
}
