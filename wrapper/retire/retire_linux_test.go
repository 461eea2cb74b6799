package retire

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestClose_MidRunAtOnce: an instance whose watch ends before the run is
// ending is closed at once (each user has 128); one that ends with the
// run is kept open, to be handed over.
func TestClose_MidRunAtOnce(t *testing.T) {
	open := func() int {
		fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
		if err != nil {
			t.Fatal(err)
		}
		return fd
	}
	isOpen := func(fd int) bool {
		_, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		return err == nil
	}
	mid := open()
	Close(mid)
	if isOpen(mid) {
		t.Errorf("an instance retired mid-run is still open")
	}
	Ending()
	defer func() { mu.Lock(); ending = false; mu.Unlock() }()
	end := open()
	Close(end)
	if !isOpen(end) {
		t.Fatalf("an instance retired as the run ends was closed")
	}
	mu.Lock()
	n := len(retired)
	fs := retired
	retired = nil
	mu.Unlock()
	for _, f := range fs {
		f.Close()
	}
	if n != 1 {
		t.Errorf("%d retired, want 1", n)
	}
}
