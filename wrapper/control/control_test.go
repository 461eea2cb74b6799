package control

import (
	"path/filepath"
	"strings"
	"testing"
)

// A companion asks only the socket named for its session's pid: another
// padrun's socket, or no session, is never dialled.
func TestAsk_OnlyTheSessionsSocket(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []Client{
		{Socket: Path(dir, 6), SessionPID: 5},
		{Socket: filepath.Join(dir, "5.sock.old"), SessionPID: 5},
		{Socket: Path(dir, 5)},
		{SessionPID: 5},
	} {
		if _, err := c.Ask(Request{Op: "hello"}); err == nil || !strings.Contains(err.Error(), "no control socket") {
			t.Errorf("%+v: %v, want no control socket", c, err)
		}
	}
	if _, err := (Client{Socket: Path(dir, 5), SessionPID: 5}).Ask(Request{Op: "hello"}); err == nil || !strings.Contains(err.Error(), "cannot reach padrun") {
		t.Errorf("the session's socket: %v, want cannot reach padrun", err)
	}
}
