package main

import (
	"strings"
	"testing"
	"time"

	"github.com/padrun/padrun/marker"
	"github.com/padrun/padrun/marker/ident"
	"github.com/padrun/padrun/wrapper"
)

func TestRefusal_Text(t *testing.T) {
	now := time.Date(2026, 11, 30, 8, 12, 1, 0, time.UTC)
	m := &marker.Marker{Tool: "padrun", ID: ident.ID{Pid: 1234, Hostname: "box"}, ChildPid: 1235, Harness: "pi", Agent: "wren", Tty: "pts/3", CreatedAt: "2026-11-30T08:00:01.000Z"}
	e := &marker.HeldError{File: "/w/s.jsonl", Holder: m, Kind: marker.HeldBusy,
		Judgement: marker.Judgement{Verdict: ident.Alive, Reason: "pid 1234 start time matches, same boot, same machine"}}
	queue := []string{"padrun", "--wait", "10m", "--", "pi", "-p", "--session", "/w/s.jsonl", "it's done?"}
	since := time.Date(2026, 11, 30, 8, 0, 1, 0, time.UTC).Local().Format("15:04:05")
	for _, c := range []struct {
		name string
		w    wording
		want string
	}{
		{"here", wording{now: now, cwd: "/w", host: "box"}, `refused: s.jsonl is in use by another session
  holder: padrun pid 1234 (child pi pid 1235, agent "wren") on pts/3, since ` + since + ` (12m ago)
hint: fork it instead (pi --fork s.jsonl), or queue: padrun --wait 10m -- pi -p --session /w/s.jsonl 'it'\''s done?'`},
		{"verbose, elsewhere", wording{now: now, cwd: "/elsewhere/deep/down", host: "laptop", verbose: true}, `refused: /w/s.jsonl is in use by another session
  holder: padrun pid 1234 (child pi pid 1235, agent "wren") on pts/3 on host box, since ` + since + ` (12m ago)
  verdict: alive: pid 1234 start time matches, same boot, same machine
hint: fork it instead (pi --fork /w/s.jsonl), or queue: padrun --wait 10m -- pi -p --session /w/s.jsonl 'it'\''s done?'`},
	} {
		if got := strings.Join(c.w.refusal(e, queue), "\n"); got != c.want {
			t.Errorf("%s: refusal:\n%s\nwant:\n%s", c.name, got, c.want)
		}
	}
	// Inside the harness: no shell flags, what to do there.
	in := wording{now: now, cwd: "/w", host: "box"}.refusal(e, nil)
	if want := "hint: open another session here, or come back to this one once its holder has ended"; in[len(in)-1] != want {
		t.Errorf("refusal inside the harness ends %q, want %q", in[len(in)-1], want)
	}
	got := strings.Join(wording{now: now}.refusal(&wrapper.WaitedError{HeldError: e, Waited: 90 * time.Second}, queue), "\n")
	if want := `hint: waited 1m30s for padrun pid 1234 (agent "wren"), which still holds it; look at it with: padrun status /w/s.jsonl`; !strings.HasSuffix(got, "\n"+want) {
		t.Fatalf("refusal after --wait:\n%s\nwant it to end:\n%s", got, want)
	}
}

// TestRefusal_Toast: a refused turn in opencode's TUI, as its toast shows
// it: three lines, the session once by its id, the holder with its
// terminal, a hint in the TUI's own commands, no verdict, no shell flags.
func TestRefusal_Toast(t *testing.T) {
	now := time.Date(2026, 11, 30, 8, 12, 1, 0, time.UTC)
	since := time.Date(2026, 11, 30, 8, 0, 1, 0, time.UTC).Local().Format("15:04:05")
	m := &marker.Marker{Tool: "padrun", ID: ident.ID{Pid: 1234, Hostname: "box"}, ChildPid: 1235, Harness: "opencode", Agent: "opencode",
		Tty: "pts/3", CreatedAt: "2026-11-30T08:00:01.000Z"}
	e := &marker.HeldError{File: "/h/.local/share/opencode/.opencode.db.padrun/ses_dcad7870cffe7kJassJEyXThfn", Holder: m, Kind: marker.HeldBusy,
		Judgement: marker.Judgement{Verdict: ident.Alive, Reason: "pid 1234 start time matches, same boot, same machine"}}
	want := `refused: session ses_dcad7870cffe7kJassJEyXThfn is in use by another session
holder: padrun pid 1234 (child opencode pid 1235, agent "opencode") on pts/3, since ` + since + ` (12m ago)
hint: /new or /sessions for another session; this one is free once its holder ends`
	for _, w := range []wording{{now: now, cwd: "/h/p1", host: "box"}, {now: now, cwd: "/h/p1", host: "box", verbose: true}} {
		if got := strings.Join(w.toast(e), "\n"); got != want {
			t.Errorf("toast (verbose %v):\n%s\nwant:\n%s", w.verbose, got, want)
		}
	}
	// After --wait, the same: the TUI's turn waited, and what to do there is as before.
	if got := strings.Join((wording{now: now, host: "box"}).toast(&wrapper.WaitedError{HeldError: e, Waited: time.Minute}), "\n"); got != want {
		t.Errorf("toast after --wait:\n%s\nwant:\n%s", got, want)
	}
}
