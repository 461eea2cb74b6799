// Package hook is padrun's side of a harness's hooks: it runs inside the
// harness's process tree (`padrun companion HARNESS-hook`), not in the run,
// and reaches the padrun of its session only through the control socket.
package hook

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/padrun/padrun/wrapper/control"
)

// Claude is the session hook of a harness with claude-style hooks (docs/spec.md
// §4.5): claude's SessionStart, qwen's SessionStart and UserPromptSubmit,
// run by the harness as `padrun companion HARNESS-hook`. It asks the padrun
// of this session to claim the transcript the harness is about to write. It
// prints nothing when granted, so the harness's context is unchanged.
// Refused: padrun ends the harness before it writes and exits with the
// refusal. padrun unreachable: the hook ends the harness itself. It returns
// the hook's exit status. c is the way to the session's padrun, from the
// hook's environment.
func Claude(name string, stdin io.Reader, stderr io.Writer, c control.Client) int {
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
	var reply control.Reply
	if err == nil {
		reply, err = c.Ask(control.Request{Op: "claim", File: in.Transcript, SessionID: in.SessionID, Stop: true, Switch: true})
	}
	if err != nil {
		fmt.Fprintf(stderr, "padrun: %s hook: %v\n", name, err)
		fmt.Fprintf(stderr, "padrun: hint: padrun fails closed and ends %s; run %s under padrun, or with padrun --no-companion\n", name, name)
		endHarness(c.SessionPID) // padrun cannot: end the harness before it writes
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
