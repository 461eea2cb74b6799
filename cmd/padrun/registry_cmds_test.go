//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// padrecord DIR NAME KIND [cwd=DIR] writes DIR/NAME as pad writes a record
// of KIND, and sets OWNER_<NAME without .json> to the pid that owns it. The
// live pid is this test process's own; sockets are bound by it, under
// $WORK/sock, as Claude Code binds its messaging socket, and recorded as pad
// records them.
//
//	v2-alive       pad v2: live session pid with its start time, live socket
//	v2-socket-gone pad v2: live session pid, its socket since unbound
//	v2-rebound     pad v2: live session pid, another socket now at its path
//	v2-dead        pad v2: session pid gone, no socket
//	v1-socket-alive    pad v1: dead registrar, socket named after a live pid
//	v1-registrar-dead  pad v1: dead registrar, no socket
//	padrun-dead    a record of a padrun that was SIGKILLed
//	empty-object, no-registered-at, empty-cwd, negative-session-pid,
//	numeric-proc-start, not-json, bad-utf8, too-large: malformed files
func cmdPadRecord(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 {
		ts.Fatalf("usage: padrecord DIR NAME KIND [cwd=DIR]")
	}
	dir, name, kind := ts.MkAbs(args[0]), args[1], args[2]
	cwd := ts.Getenv("WORK")
	for _, a := range args[3:] {
		if v, ok := strings.CutPrefix(a, "cwd="); ok {
			cwd = v
		}
	}
	ts.Check(os.MkdirAll(dir, 0o700))
	self := os.Getpid()
	stem := strings.TrimSuffix(name, ".json")
	now := time.Now().UTC().Format(time.RFC3339Nano)
	v2 := func(pid int, token string) map[string]any {
		return map[string]any{
			"session_pid": pid, "session_pid_source": "CLAUDE_PID", "session_pid_verified": true, "proc_start": token,
			"session_id": "sess-" + stem, "agent": "wren", "pid": noPid(), "cwd": cwd, "registered_at": now,
		}
	}
	v1 := map[string]any{"pid": noPid(), "cwd": cwd, "registered_at": time.Now().UTC().Format(time.RFC3339),
		"agent": "wren", "session_id": "sess-" + stem}
	var body any
	owner := 0
	switch kind {
	case "v2-alive":
		owner, body = self, with(v2(self, field22(ts, self)), bindSocket(ts, stem, false))
	case "v2-socket-gone":
		owner, body = self, with(v2(self, field22(ts, self)), bindSocket(ts, stem, true))
	case "v2-rebound":
		rec := with(v2(self, field22(ts, self)), bindSocket(ts, stem, false))
		rebind(ts, stem)
		owner, body = self, rec
	case "v2-dead":
		owner = noPid()
		body = v2(owner, "1")
	case "v1-socket-alive":
		owner, body = self, with(v1, map[string]any{"messaging_socket_path": "/run/claude/" + strconv.Itoa(self) + ".sock"})
	case "v1-registrar-dead":
		owner, body = v1["pid"].(int), v1
	case "padrun-dead":
		owner = noPid()
		body = with(v2(owner, "1"), map[string]any{"session_pid_source": "self", "agent": "ghost",
			"padrun": map[string]any{"version": "0.1.0", "harness": "pi", "session_files": []string{"/w/s.jsonl"}, "markers": []string{"/w/s.jsonl.live.json"}, "command": "pi"}})
	default:
		body = malformedBody(ts, kind, v2(self, field22(ts, self)))
	}
	b, ok := body.([]byte)
	if !ok {
		var err error
		b, err = json.MarshalIndent(body, "", "  ")
		ts.Check(err)
	}
	ts.Check(os.WriteFile(filepath.Join(dir, name), b, 0o600))
	setenv(ts, "OWNER_"+stem, strconv.Itoa(owner))
}

// noPid is a pid that no process has: above Linux's PID_MAX_LIMIT (2^22),
// so that pid reuse on a busy machine never brings a dead record to life.
func noPid() int { return 1<<22 + 1 + int(nextNoPid.Add(1)) }

var nextNoPid atomic.Int64

func malformedBody(ts *testscript.TestScript, kind string, good map[string]any) any {
	switch kind {
	case "empty-object":
		return []byte(`{}`)
	case "no-registered-at":
		return with(good, map[string]any{"registered_at": nil})
	case "empty-cwd":
		return with(good, map[string]any{"cwd": ""})
	case "negative-session-pid":
		return with(good, map[string]any{"session_pid": -5})
	case "numeric-proc-start":
		n, err := strconv.Atoi(good["proc_start"].(string))
		ts.Check(err)
		return with(good, map[string]any{"proc_start": n})
	case "not-json":
		return []byte(`{"session_pid": 1,`)
	case "bad-utf8":
		return []byte("{\"pid\":1,\"cwd\":\"/w\",\"agent\":\"\xff\",\"registered_at\":\"2026-01-01T00:00:00Z\"}")
	case "too-large":
		return with(good, map[string]any{"pad": strings.Repeat("x", 64<<10)})
	}
	ts.Fatalf("padrecord: unknown kind %s", kind)
	return nil
}

func with(m map[string]any, extra map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if v != nil {
			out[k] = v
		}
	}
	for k, v := range extra {
		if v == nil {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

// bindSocket binds $WORK/sock/NAME.sock for the rest of the script (or
// unbinds it at once when gone) and returns its fields as pad records them.
func bindSocket(ts *testscript.TestScript, name string, gone bool) map[string]any {
	path := ts.MkAbs(filepath.Join("sock", name+".sock"))
	ts.Check(os.MkdirAll(filepath.Dir(path), 0o700))
	l, err := net.Listen("unix", path)
	ts.Check(err)
	fi, err := os.Stat(path)
	ts.Check(err)
	st := fi.Sys().(*syscall.Stat_t)
	if gone {
		l.Close() // unbinds and removes it
	} else {
		ts.Defer(func() { l.Close() })
	}
	return map[string]any{"messaging_socket_path": path, "socket_mtime_unix_nano": fi.ModTime().UnixNano(),
		"socket_ino": st.Ino, "socket_dev": uint64(st.Dev)}
}

// rebind puts a new socket at $WORK/sock/NAME.sock while the old one is
// still bound, so the new one cannot get the old one's inode.
func rebind(ts *testscript.TestScript, name string) {
	path := ts.MkAbs(filepath.Join("sock", name+".sock"))
	tmp := path + ".new"
	l, err := net.Listen("unix", tmp)
	ts.Check(err)
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	ts.Check(os.Rename(tmp, path))
	ts.Defer(func() { l.Close() })
}

// padKeys are the keys of pad's SessionRecord, in its order; rows may add
// padrun's object.
var padKeys = []string{"session_pid", "session_pid_source", "session_pid_verified", "agent", "cwd", "session_id",
	"liveness", "registered_at", "legacy", "malformed", "messaging_socket_path", "path", "padrun"}

// always are the keys pad writes in every row.
var always = []string{"session_pid", "session_pid_verified", "agent", "cwd", "liveness", "registered_at", "path"}

// [!] lsrow FILE NAME [KEY=JSON|KEY=-|KEY=@mtime...] finds the row of
// `ls --json` output FILE (or of `prune --json`'s removed rows) whose path ends in /NAME and checks its keys (pad's
// only, the ones pad always writes present) and the values given: JSON text,
// - for absent, @mtime for the file's mtime as RFC3339. Negated: no such row.
func cmdLsRow(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: lsrow FILE NAME [KEY=VALUE...]")
	}
	rows := lsRows(ts, args[0])
	var row map[string]any
	for _, r := range rows {
		if p, _ := r["path"].(string); filepath.Base(p) == args[1] {
			row = r
		}
	}
	if neg {
		if row != nil {
			ts.Fatalf("%s is listed: %v", args[1], row)
		}
		return
	}
	if row == nil {
		ts.Fatalf("%s is not listed", args[1])
	}
	for k := range row {
		if !contains(padKeys, k) {
			ts.Fatalf("row %s has key %q, not pad's", args[1], k)
		}
	}
	for _, k := range always {
		if _, ok := row[k]; !ok {
			ts.Fatalf("row %s lacks %q", args[1], k)
		}
	}
	for _, kv := range args[2:] {
		k, want, _ := strings.Cut(kv, "=")
		got, present := row[k]
		switch {
		case want == "-":
			if present {
				ts.Fatalf("row %s has %s = %v, want none", args[1], k, got)
			}
			continue
		case want == "@mtime":
			fi, err := os.Stat(row["path"].(string))
			ts.Check(err)
			want = strconv.Quote(fi.ModTime().UTC().Format(time.RFC3339))
		}
		var w any
		if err := json.Unmarshal([]byte(want), &w); err != nil {
			ts.Fatalf("lsrow: %s: %v", kv, err)
		}
		if gb, wb := mustJSON(got), mustJSON(w); !present || gb != wb {
			ts.Fatalf("row %s has %s = %s, want %s", args[1], k, gb, wb)
		}
	}
}

// lsrows FILE NAME... checks that the rows of FILE are exactly NAME..., in
// any order.
func cmdLsRows(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: lsrows FILE NAME...")
	}
	var got []string
	for _, r := range lsRows(ts, args[0]) {
		p, _ := r["path"].(string)
		got = append(got, filepath.Base(p))
	}
	want := args[1:]
	g, w := append([]string(nil), got...), append([]string(nil), want...)
	sort.Strings(g)
	sort.Strings(w)
	if strings.Join(g, " ") != strings.Join(w, " ") {
		ts.Fatalf("rows %v, want %v", got, want)
	}
}

// lsRows reads the rows of `ls --json`, or the removed rows of `prune --json`.
func lsRows(ts *testscript.TestScript, file string) []map[string]any {
	b := []byte(ts.ReadFile(file))
	var rows []map[string]any
	if err := json.Unmarshal(b, &rows); err == nil {
		return rows
	}
	var pruned struct{ Removed []map[string]any }
	if err := json.Unmarshal(b, &pruned); err != nil || pruned.Removed == nil {
		ts.Fatalf("%s holds neither rows nor removed rows: %v", file, err)
	}
	return pruned.Removed
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
