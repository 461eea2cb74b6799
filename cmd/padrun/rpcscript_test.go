//go:build linux

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// rpcSteps reads an RPC script for pi: one step a line, with the script's
// variables expanded ($ENTRY is left for the driver).
//
//	prompt TEXT   send a prompt and wait for agent_end
//	pause NAME    create NAME.ready in $WORK, then wait for NAME.go there
//	{...}         send a command and wait for its response; $ENTRY is the
//	              last entryId of the last get_fork_messages response
func rpcSteps(ts *testscript.TestScript, file string) []string {
	var steps []string
	for _, line := range strings.Split(ts.ReadFile(file), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		steps = append(steps, os.Expand(line, func(k string) string {
			if v := ts.Getenv(k); v != "" {
				return v
			}
			return "$" + k
		}))
	}
	return steps
}

var entryID = regexp.MustCompile(`"entryId":"([^"]+)"`)

// driveRPCScript runs the steps against pi's RPC mode, copying every line
// pi prints to sink, then closes stdin, which ends pi.
func driveRPCScript(steps []string, in io.WriteCloser, out io.Reader, sink io.Writer, work string, done chan struct{}) {
	defer close(done)
	r := bufio.NewReader(out)
	entry := ""
	// await copies lines until one holds every part.
	await := func(parts ...string) bool {
		for {
			line, err := r.ReadBytes('\n')
			sink.Write(line)
			if bytes.Contains(line, []byte(`"command":"get_fork_messages"`)) {
				if ms := entryID.FindAllSubmatch(line, -1); ms != nil {
					entry = string(ms[len(ms)-1][1])
				}
			}
			all := true
			for _, p := range parts {
				all = all && bytes.Contains(line, []byte(p))
			}
			if all {
				return true
			}
			if err != nil {
				return false
			}
		}
	}
	for _, step := range steps {
		ok := true
		switch {
		case strings.HasPrefix(step, "prompt "):
			b, _ := json.Marshal(map[string]string{"type": "prompt", "message": strings.TrimPrefix(step, "prompt ")})
			in.Write(append(b, '\n'))
			ok = await(`"type":"agent_end"`)
		case strings.HasPrefix(step, "pause "):
			name := filepath.Join(work, strings.TrimPrefix(step, "pause "))
			os.WriteFile(name+".ready", nil, 0o600)
			for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				if _, err := os.Stat(name + ".go"); err == nil {
					break
				}
			}
		default:
			var cmd struct {
				Type string `json:"type"`
			}
			step = strings.ReplaceAll(step, "$ENTRY", entry)
			json.Unmarshal([]byte(step), &cmd)
			in.Write([]byte(step + "\n"))
			ok = await(`"type":"response"`, fmt.Sprintf(`"command":%q`, cmd.Type))
		}
		if !ok {
			break
		}
	}
	in.Close()
	io.Copy(sink, r)
}

// rpcstate VAR FILE sets VAR to the last sessionFile that pi's get_state
// reported in an RPC transcript.
func cmdRPCState(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: rpcstate VAR FILE")
	}
	ms := regexp.MustCompile(`"sessionFile":"([^"]+)"`).FindAllStringSubmatch(ts.ReadFile(args[1]), -1)
	if len(ms) == 0 {
		ts.Fatalf("%s reports no sessionFile", args[1])
	}
	setenv(ts, args[0], ms[len(ms)-1][1])
}

// markerpid NAME|FILE:KEY MARKER checks that a marker's pid is the pid of
// the process the script started as NAME (or the pid in a ready file): its
// holder is that padrun.
func cmdMarkerPid(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: markerpid NAME|FILE:KEY MARKER")
	}
	var pid int
	if strings.Contains(args[0], ":") {
		pid = readyPid(ts, args[0])
	} else {
		v, ok := procs.Load(ts.Getenv("WORK") + "\x00" + args[0])
		if !ok {
			ts.Fatalf("markerpid: %s was not started", args[0])
		}
		pid = v.(*proc).cmd.Process.Pid
	}
	m := readJSON(ts, args[1])
	if got, want := m["pid"], float64(pid); got != want {
		ts.Fatalf("%s names pid %v, want %s's pid %v", args[1], got, args[0], want)
	}
}
