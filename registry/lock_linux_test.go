package registry

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/padrun/padrun/marker/safefile"
	"github.com/padrun/padrun/supervise/childtest"
)

// TestLock_BoundedWait_NamesHolder: a stuck holder of the folder's lock
// makes a mutation give up after the bound, naming the holder's pid and
// command; the waiter is told once who holds it.
func TestLock_BoundedWait_NamesHolder(t *testing.T) {
	dir := padDir(t)
	cmd := childtest.Command("hold-lock")
	cmd.Env = append(cmd.Env, "REGISTRY_DIR="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "ready")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the holder did not take the lock")
		}
	}
	var told []string
	r := &Registry{Dir: dir, OnWait: func(h string) { told = append(told, h) }}
	path := filepath.Join(dir, ".lock")
	h, err := openLockFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer closeLockFile(h)
	err = r.waitLock(t.Context(), h, path, 200*time.Millisecond)
	var le *LockError
	if !errors.As(err, &le) {
		t.Fatalf("wait = %v, want a LockError", err)
	}
	want := "pid " + strconv.Itoa(cmd.Process.Pid) + " (registry.test)"
	if le.Holder != want || !strings.Contains(err.Error(), want) {
		t.Fatalf("holder %q (%v), want %q", le.Holder, err, want)
	}
	if len(told) != 1 || told[0] != want {
		t.Fatalf("told %q, want once %q", told, want)
	}

	// A context that ends (a signal, in the run) ends the wait at once.
	cause := errors.New("SIGTERM")
	ctx, cancel := contextWithCause(t)
	r.OnWait = func(string) { cancel(cause) }
	if err := r.waitLock(ctx, h, path, time.Hour); !errors.Is(err, cause) {
		t.Fatalf("wait with an ended context = %v, want %v", err, cause)
	}
}

func openLockFile(path string) (safefile.Handle, error) { return safefile.OpenLock(path) }

func closeLockFile(h safefile.Handle) { safefile.Close(h) }

func contextWithCause(t *testing.T) (context.Context, context.CancelCauseFunc) {
	ctx, cancel := context.WithCancelCause(t.Context())
	t.Cleanup(func() { cancel(nil) })
	return ctx, cancel
}

func init() { helpers["hold-lock"] = holdLock }

// holdLock, a helper, takes the lock of the folder $REGISTRY_DIR, says so
// in its file ready, and holds it until killed.
func holdLock() {
	dir := os.Getenv("REGISTRY_DIR")
	r := &Registry{Dir: dir}
	r.locked(context.Background(), LockWait, func() error {
		os.WriteFile(filepath.Join(dir, "ready"), []byte("ready"), 0o600)
		select {}
	})
}
