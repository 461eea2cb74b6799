// Package control is the protocol of padrun's control socket, how a
// companion inside the harness asks its own padrun to guard the session
// file the harness is about to use (docs/spec.md §4.5), and the client side of it.
// The server is the run's (package wrapper). The protocol is one JSON
// object a line each way:
//
//	{"op":"claim","file":"/abs/F","sessionId":"…"}  -> {"result":"claimed"}
//	                                                 | {"result":"refused","lines":[…],"verdict":"…"}
//	                                                 | {"result":"error","error":"…"}
//	{"op":"release","file":"/abs/F"}                 -> {"result":"released"} | {"result":"error",…}
//	{"op":"hello"}                                   -> {"result":"ok","pid":1234}
//
// The socket is <dir>/<padrun pid>.sock (Path), mode 0600, in a 0700 folder
// only the user can change; it accepts only padrun's own uid and goes at
// every exit.
package control

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"time"
)

// Request is one line a companion sends.
type Request struct {
	Op        string `json:"op"`
	File      string `json:"file,omitempty"`
	SessionID string `json:"sessionId,omitempty"`
	// Stop: the harness cannot cancel what it is doing, so a claim that is
	// not granted ends the session at once (SIGKILL, before it writes) and
	// padrun exits with the refusal.
	Stop bool `json:"stop,omitempty"`
	// Switch: the file replaces the harness's current session file, which
	// is released once the claim is granted (claude's /clear, /resume).
	Switch bool `json:"switch,omitempty"`
	// Wait: the harness waits for the answer, so a held file is waited
	// for up to --wait, as padrun waits for the files it names itself
	// (opencode's turn, which waits before it stores anything).
	Wait bool `json:"wait,omitempty"`
}

// Reply is padrun's answer to one request.
type Reply struct {
	Result  string   `json:"result"`
	Lines   []string `json:"lines,omitempty"`   // the refusal for people, each with "padrun: "
	Verdict string   `json:"verdict,omitempty"` // the holder's verdict, when refused
	Toast   []string `json:"toast,omitempty"`   // the refusal for a TUI's toast, a few short lines
	Error   string   `json:"error,omitempty"`
	Pid     int      `json:"pid,omitempty"`
}

// Path names the control socket of the padrun with pid in dir.
func Path(dir string, pid int) string {
	return filepath.Join(dir, strconv.Itoa(pid)+".sock")
}

// MaxPath is the longest socket path every platform binds (darwin's
// sun_path holds 104 bytes with its terminating NUL).
const MaxPath = 103

// Client is a companion's way to the padrun of its session, as the
// hook's environment names it.
type Client struct {
	Socket     string // PADRUN_CONTROL
	SessionPID int    // PAD_SESSION_PID, 0 when it names no session
}

// Ask sends one request to this session's padrun and reads its answer.
// The socket must be named for the session's pid (Path): a socket of
// another padrun is never asked.
func (c Client) Ask(req Request) (Reply, error) {
	var r Reply
	if c.Socket == "" || c.SessionPID <= 0 || filepath.Base(c.Socket) != filepath.Base(Path("", c.SessionPID)) {
		return r, errors.New("no control socket of this padrun session (PADRUN_CONTROL, PAD_SESSION_PID)")
	}
	conn, err := net.DialTimeout("unix", c.Socket, 10*time.Second)
	if err != nil {
		return r, fmt.Errorf("cannot reach padrun: %w", err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second)) // Best effort.
	if err := json.NewEncoder(conn).Encode(req); err != nil {
		return r, fmt.Errorf("cannot reach padrun: %w", err)
	}
	line, err := bufio.NewReader(conn).ReadBytes('\n')
	if err != nil {
		return r, fmt.Errorf("padrun did not answer: %w", err)
	}
	if err := json.Unmarshal(line, &r); err != nil {
		return r, fmt.Errorf("bad answer from padrun: %w", err)
	}
	return r, nil
}
