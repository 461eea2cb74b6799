//go:build linux

package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/padrun/padrun/wrapper"
	"github.com/padrun/padrun/wrapper/control"
	"github.com/padrun/padrun/wrapper/harness"
)

// hookCommands are the command lines a harness's hooks run, as padrun
// loads them (its settings file, or claude's --settings argument), with
// padrun's path given as self.
func hookCommands(t *testing.T, c *harness.CompanionSpec, self string) []string {
	t.Helper()
	load := harness.Load{Hook: self + " " + c.Hook, Getenv: func(string) string { return "" }}
	var docs [][]byte
	if _, b := c.Settings(load.Hook); b != nil {
		docs = append(docs, b)
	}
	argv, _ := c.Argv([]string{"h", "-p", "hi"}, load)
	for _, a := range argv {
		if strings.HasPrefix(a, "{") {
			docs = append(docs, []byte(a))
		}
	}
	var cmds []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if s, ok := v["command"].(string); ok {
				cmds = append(cmds, s)
			}
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	for _, d := range docs {
		var v any
		if err := json.Unmarshal(d, &v); err != nil {
			t.Fatalf("settings %s: %v", d, err)
		}
		walk(v)
	}
	return cmds
}

// fakeControl answers every claim on a control socket named for this
// process, and returns the client a hook's environment names and the
// requests it was sent.
func fakeControl(t *testing.T) (socket string, pid int, got chan control.Request) {
	t.Helper()
	pid = os.Getpid()
	socket = control.Path(t.TempDir(), pid)
	l, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	got = make(chan control.Request, 16)
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			var req control.Request
			line, _ := bufio.NewReader(conn).ReadBytes('\n')
			json.Unmarshal(line, &req)
			got <- req
			conn.Write([]byte(`{"result":"claimed"}` + "\n"))
			conn.Close()
		}
	}()
	return socket, pid, got
}

// runCompanion runs `padrun companion args...` in this process, with in
// on its stdin.
func runCompanion(t *testing.T, in string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	f, ferr := os.CreateTemp(t.TempDir(), "stdin")
	if ferr != nil {
		t.Fatal(ferr)
	}
	f.WriteString(in)
	f.Seek(0, 0)
	defer f.Close()
	old := os.Stdin
	os.Stdin = f
	defer func() { os.Stdin = old }()
	var out, errs strings.Builder
	err = findVerb("companion").runVerb(args, &out, &errs)
	return out.String(), errs.String(), err
}

// TestCompanion_EveryHookReachesItsAdapter: for every registered harness
// whose companion runs padrun again, each command line padrun loads into
// its hooks reaches that harness's hook side through `padrun companion`,
// which claims the hook's transcript of the session's padrun; a harness
// without such a hook has no side. Seen failing with droid's runHook
// given gemini's.
func TestCompanion_EveryHookReachesItsAdapter(t *testing.T) {
	socket, pid, got := fakeControl(t)
	t.Setenv("PADRUN_CONTROL", socket)
	t.Setenv("PAD_SESSION_PID", strconv.Itoa(pid))
	const self = "/bin/padrun"
	transcript := filepath.Join(t.TempDir(), "s.jsonl")
	in := `{"session_id":"a1","transcript_path":"` + transcript + `","hook_event_name":"SessionStart","source":"startup"}`
	reached := 0
	for _, name := range harness.Names() {
		a, _ := harness.Lookup(name)
		sides := slices.DeleteFunc(harness.HookSides(), func(h harness.HookSide) bool { return h.Harness != name })
		if a.Companion == nil || a.Companion.Hook == "" {
			if len(sides) != 0 {
				t.Errorf("%s: hook sides %v without a hook", name, sides)
			}
			continue
		}
		cmds := hookCommands(t, a.Companion, self)
		if len(cmds) == 0 || len(sides) != 1 {
			t.Errorf("%s: hooks run %q, sides %v", name, cmds, sides)
			continue
		}
		for _, cmd := range cmds {
			args := strings.Fields(strings.TrimPrefix(cmd, self+" "))
			if args[0] != "companion" {
				t.Errorf("%s: its hook runs %q", name, cmd)
				continue
			}
			stdout, stderr, err := runCompanion(t, in, args[1:]...)
			if err != nil || stdout != "" || stderr != "" {
				t.Errorf("%s: padrun %s: %v, stdout %q, stderr %q", name, strings.Join(args, " "), err, stdout, stderr)
				continue
			}
			select {
			case req := <-got:
				if req.Op != "claim" || req.File != transcript || req.SessionID != "a1" || !req.Stop {
					t.Errorf("%s: padrun %s asked %+v", name, strings.Join(args, " "), req)
				}
			default:
				t.Errorf("%s: padrun %s asked padrun nothing", name, strings.Join(args, " "))
			}
			if h, _, ok := harness.FindHook(args[1:]); !ok || h.Harness != name {
				t.Errorf("%s: padrun %s is %s's side", name, strings.Join(args, " "), h.Harness)
			}
			reached++
		}
	}
	if reached == 0 {
		t.Fatal("no hook reached")
	}
}

// TestCompanion_UnknownSide: a side no companion's hook runs, or a known
// one with the wrong words after it, is a usage error naming every side.
func TestCompanion_UnknownSide(t *testing.T) {
	for _, args := range [][]string{{"codex-hook"}, {"pi-hook"}, {"gemini-hook"}, {"claude-hook", "SessionStart"}, {"hook"}} {
		_, _, err := runCompanion(t, "{}", args...)
		var usage *wrapper.UsageError
		if !errors.As(err, &usage) || usage.Err.Error() != "companion: unknown side "+strconv.Quote(strings.Join(args, " ")) {
			t.Errorf("padrun companion %q: %v", args, err)
			continue
		}
		for _, h := range harness.HookSides() {
			if !strings.Contains(usage.Advice, h.Usage()) {
				t.Errorf("padrun companion %q: advice %q names no %s", args, usage.Advice, h.Usage())
			}
		}
	}
}
