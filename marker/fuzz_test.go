package marker

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/padrun/padrun/marker/ident"
)

// Any bytes parse to a marker with a pid or to an error, never a panic, and
// the ladder judges whatever parses.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"v":1,"tool":"padrun","pid":1234,"startToken":"987654","childPid":5,"childStartToken":7}`))
	f.Add([]byte(`{"pid":1,"bootId":"x","machineId":"y","hostname":"h","heartbeatSeconds":30}`))
	f.Add([]byte(`{"pid":"12"}`))
	f.Add([]byte(`{"pid":-1}`))
	f.Add([]byte(`[]`))
	f.Add([]byte("{\"pid\":1,\"startToken\":1e999}"))
	self := ident.Self{ID: ident.ID{Pid: 1, BootID: "b", MachineID: "m", Hostname: "h", PidNamespace: "1"}}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parse(b)
		if err != nil {
			return
		}
		if m.Pid == 0 {
			t.Fatalf("parsed a marker without a pid: %s", b)
		}
		// Judge only markers of other machines and namespaces: no process is
		// signalled for a fuzzed pid.
		h := m.proc()
		h.MachineID, h.PidNamespace = "other-"+h.MachineID, "other-"+h.PidNamespace
		if j := verdictOf(h, self, time.Now()); j.Verdict == ident.Alive {
			t.Fatalf("a holder on another machine judged alive: %s", j)
		}
		if _, err := json.Marshal(m); err != nil {
			t.Fatalf("a parsed marker does not encode: %v", err)
		}
	})
}

// The marker's own encoder writes exactly the bytes json.Marshal writes,
// for every value of every field: escaping, invalid UTF-8, omitempty.
func FuzzEncode(f *testing.F) {
	f.Add(1, "padrun", "0.1.0", "n-1", "/s/a.jsonl", "id", 1234, "987654", "boot", "mach", "host", "4026531836", 1000, 5, "7", "/sys/fs/cgroup/x", 5, 5, "pi", "print", "a", "2026-11-30T08:00:00.000Z", 15)
	f.Add(0, "", "", "", "<a&b>\u2028\xff\"\\\n\x01", "", -1, "", "", "", "", "", 0, 0, "", "", 0, 0, "", "", "", "", 0)
	f.Fuzz(func(t *testing.T, v int, tool, version, nonce, file, id string, pid int, token, boot, mach, host, ns string, uid, cpid int, ctoken, cg string, pgid, sid int, h, mode, agent, created string, hb int) {
		m := Marker{V: v, Tool: tool, Version: version, Nonce: nonce, SessionFile: file, SessionID: id,
			ID: ident.ID{Pid: pid, StartToken: ident.Token(token), BootID: boot, MachineID: mach, Hostname: host,
				PidNamespace: ident.Token(ns), TimeNamespace: ident.Token(ns)}, UID: uid, ChildPid: cpid, ChildStartToken: ident.Token(ctoken),
			Cgroup: cg, ChildPgid: pgid, ChildSid: sid, Harness: h, Mode: mode, Agent: agent,
			CreatedAt: created, HeartbeatSeconds: hb, ModTime: time.Now()}
		want, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.encode(); string(got) != string(want) {
			t.Fatalf("encode:\n%s\njson.Marshal:\n%s", got, want)
		}
	})
}
