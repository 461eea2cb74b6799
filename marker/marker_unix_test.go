//go:build unix

package marker

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestRead_Bounded(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s.jsonl")
	big := `{"pid":1,"x":"` + strings.Repeat("x", maxSize) + `"}`
	if err := os.WriteFile(Path(file), []byte(big), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(file); err == nil || !strings.Contains(err.Error(), "larger than 64 KiB") {
		t.Fatalf("Read of a large marker = %v, want too large", err)
	}
	os.Remove(Path(file))
	if err := syscall.Mkfifo(Path(file), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(file); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("Read of a FIFO = %v, want not regular", err)
	}
}
