package wrapper

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strconv"
	"time"
)

// Hook is the session hook of a harness with claude-style hooks (SPEC
// 4.5): claude's SessionStart, qwen's SessionStart and UserPromptSubmit,
// run by the harness as `padrun companion HARNESS-hook`. It asks the padrun
// of this session to claim the transcript the harness is about to write. It
// prints nothing when granted, so the harness's context is unchanged.
// Refused: padrun ends the harness before it writes and exits with the
// refusal. padrun unreachable: the hook ends the harness itself. It returns
// the hook's exit status. env is the hook's environment (ReadEnv).
func Hook(name string, stdin io.Reader, stderr io.Writer, env Env) int {
	var in struct {
		SessionID  string `json:"session_id"`
		Transcript string `json:"transcript_path"`
		Source     string `json:"source"`
	}
	b, err := io.ReadAll(io.LimitReader(stdin, 1<<20))
	if err == nil {
		err = json.Unmarshal(b, &in)
	}
	if err == nil && !filepath.IsAbs(in.Transcript) {
		err = errors.New("no absolute transcript_path in the hook's input")
	}
	var reply controlReply
	if err == nil {
		reply, err = askControl(env, controlRequest{Op: "claim", File: in.Transcript, SessionID: in.SessionID, Stop: true, Switch: true})
	}
	if err != nil {
		fmt.Fprintf(stderr, "padrun: %s hook: %v\n", name, err)
		fmt.Fprintf(stderr, "padrun: hint: padrun fails closed and ends %s; run %s under padrun, or with padrun --no-companion\n", name, name)
		endHarness(env) // padrun cannot: end the harness before it writes
		return 2
	}
	switch reply.Result {
	case "claimed":
		return 0
	case "refused":
		for _, l := range reply.Lines {
			fmt.Fprintln(stderr, l)
		}
	default:
		fmt.Fprintf(stderr, "padrun: %s hook: %s\n", name, reply.Error)
	}
	return 2
}

// endHarness ends the harness that runs the hook; tests stand in for it.
var endHarness = stopHarness

// askControl sends one request to this session's padrun and reads its
// answer. The socket is $PADRUN_CONTROL, which must be named for
// $PAD_SESSION_PID.
func askControl(env Env, req controlRequest) (controlReply, error) {
	var r controlReply
	path := env.Control
	pid, err := env.SessionPID()
	if path == "" || err != nil || pid == 0 || filepath.Base(path) != strconv.Itoa(pid)+".sock" {
		return r, errors.New("no control socket of this padrun session (PADRUN_CONTROL, PAD_SESSION_PID)")
	}
	conn, err := net.DialTimeout("unix", path, 10*time.Second)
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
