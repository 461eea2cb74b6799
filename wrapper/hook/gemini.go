package hook

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/padrun/padrun/wrapper/control"
)

// Gemini is gemini's SessionStart and BeforeAgent hook (docs/spec.md §4.5), run
// by gemini as `padrun companion gemini-hook EVENT` with the hook's JSON on
// stdin. It asks the padrun of this session to claim the session file
// gemini writes (transcript_path): at SessionStart the file gemini has just
// opened (its header is written by then: a new session's own), before a
// turn the file the turn will write, which after an in-app /resume is
// another. Granted, it prints nothing and gemini goes on unchanged. Refused,
// padrun has ended gemini before it records the prompt; the hook still
// answers with gemini's block decision, and so it does when padrun cannot
// be reached, ending gemini itself. It returns the hook's exit status,
// which is 0: gemini reads a decision only from a hook that succeeded. c
// is the way to the session's padrun, from the hook's environment.
func Gemini(event string, stdin io.Reader, stdout, stderr io.Writer, c control.Client) int {
	var in struct {
		SessionID  string `json:"session_id"`
		Transcript string `json:"transcript_path"`
	}
	b, err := io.ReadAll(io.LimitReader(stdin, 1<<20))
	if err == nil {
		err = json.Unmarshal(b, &in)
	}
	req := control.Request{Op: "claim", File: in.Transcript, SessionID: in.SessionID, Stop: true}
	switch {
	case err != nil:
	case event == "SessionStart" && in.Transcript == "":
		req = control.Request{Op: "hello"} // no file yet: greet only
	case !filepath.IsAbs(in.Transcript):
		err = errors.New("no absolute transcript_path in the hook's input")
	case event == "BeforeAgent":
		// The turn's file replaces the one before (/resume, /clear). At
		// SessionStart a resume's file is not gemini's yet: nothing is
		// released then.
		req.Switch = true
	case event != "SessionStart":
		err = fmt.Errorf("unknown event %q", event)
	}
	var reply control.Reply
	if err == nil {
		reply, err = c.Ask(req)
	}
	var why []string
	switch {
	case err != nil:
		why = []string{fmt.Sprintf("padrun: gemini hook: %v", err),
			"padrun: hint: padrun fails closed and ends gemini; run gemini under padrun, or with padrun --no-companion"}
		endHarness(c.SessionPID) // padrun cannot: end gemini before it writes
	case reply.Result == "claimed" || reply.Result == "ok":
		return 0
	case reply.Result == "refused":
		why = reply.Lines
	default:
		why = []string{"padrun: gemini hook: " + reply.Error}
	}
	for _, l := range why {
		fmt.Fprintln(stderr, l)
	}
	out, _ := json.Marshal(map[string]any{"decision": "block", "continue": false, "reason": strings.Join(why, "\n")})
	fmt.Fprintf(stdout, "%s\n", out)
	return 0
}
