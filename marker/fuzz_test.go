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
	self := ident.Self{Pid: 1, BootID: "b", MachineID: "m", Hostname: "h", PidNamespace: "1"}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Parse(b)
		if err != nil {
			return
		}
		if m.Pid <= 0 {
			t.Fatalf("parsed a marker without a pid: %s", b)
		}
		// Judge only markers of other machines and namespaces: no process is
		// signalled for a fuzzed pid.
		h := m.Proc()
		h.MachineID, h.PidNamespace = "other-"+h.MachineID, "other-"+h.PidNamespace
		if j := verdictOf(h, self, time.Now()); j.Verdict == ident.Alive {
			t.Fatalf("a holder on another machine judged alive: %s", j)
		}
		if _, err := json.Marshal(m); err != nil {
			t.Fatalf("a parsed marker does not encode: %v", err)
		}
	})
}
