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
	m := &marker.Marker{Tool: "padrun", ID: ident.ID{Pid: 1234, Hostname: "box"}, ChildPid: 1235, Harness: "pi", Agent: "wren", CreatedAt: "2026-11-30T08:00:01.000Z"}
	e := &marker.HeldError{File: "/w/s.jsonl", Holder: m, Kind: marker.HeldBusy,
		Judgement: marker.Judgement{Verdict: ident.Alive, Reason: "pid 1234 start time matches, same boot, same machine"}}
	queue := []string{"padrun", "--wait", "10m", "--", "pi", "-p", "--session", "/w/s.jsonl", "it's done?"}
	got := strings.Join(refusal(e, now, queue), "\n")
	since := time.Date(2026, 11, 30, 8, 0, 1, 0, time.UTC).Local().Format("15:04:05")
	want := `refused: /w/s.jsonl is in use by another session
  holder: padrun pid 1234 (child pi pid 1235, agent "wren") on host box, since ` + since + ` (12m ago)
  verdict: alive: pid 1234 start time matches, same boot, same machine
hint: fork it instead (pi --fork /w/s.jsonl), or queue: padrun --wait 10m -- pi -p --session /w/s.jsonl 'it'\''s done?'`
	if got != want {
		t.Fatalf("refusal:\n%s\nwant:\n%s", got, want)
	}
	got = strings.Join(refusal(&wrapper.WaitedError{HeldError: e, Waited: 90 * time.Second}, now, queue), "\n")
	if want := `hint: waited 1m30s for padrun pid 1234 (agent "wren"), which still holds it; look at it with: padrun status /w/s.jsonl`; !strings.HasSuffix(got, "\n"+want) {
		t.Fatalf("refusal after --wait:\n%s\nwant it to end:\n%s", got, want)
	}
}
