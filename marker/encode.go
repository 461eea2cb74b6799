package marker

import "github.com/padrun/padrun/marker/jsonenc"

// encode returns m as json.Marshal writes it, byte for byte (FuzzEncode
// proves it): the same field order, omitempty rules and escaping, without
// encoding/json's reflection on the start-up path.
func (m Marker) encode() []byte {
	b := make([]byte, 0, 512)
	b = jsonenc.Int(jsonenc.Key(append(b, '{'), "", "", "v"), m.V)
	b = str(b, "tool", m.Tool)
	b = str(b, "version", m.Version)
	b = str(b, "nonce", m.Nonce)
	b = str(b, "sessionFile", m.SessionFile)
	b = str(b, "sessionId", m.SessionID)
	b = jsonenc.Int(jsonenc.Key(b, ",", "", "pid"), m.Pid)
	b = str(b, "startToken", string(m.StartToken))
	b = str(b, "bootId", m.BootID)
	b = str(b, "machineId", m.MachineID)
	b = str(b, "hostname", m.Hostname)
	b = str(b, "pidNamespace", string(m.PidNamespace))
	b = str(b, "timeNamespace", string(m.TimeNamespace))
	b = jsonenc.Int(jsonenc.Key(b, ",", "", "uid"), m.UID)
	b = num(b, "childPid", m.ChildPid)
	b = str(b, "childStartToken", string(m.ChildStartToken))
	b = str(b, "cgroup", m.Cgroup)
	b = num(b, "childPgid", m.ChildPgid)
	b = num(b, "childSid", m.ChildSid)
	b = str(b, "harness", m.Harness)
	b = str(b, "mode", m.Mode)
	b = str(b, "agent", m.Agent)
	b = str(b, "tty", m.Tty)
	b = str(b, "createdAt", m.CreatedAt)
	b = jsonenc.Int(jsonenc.Key(b, ",", "", "heartbeatSeconds"), m.HeartbeatSeconds)
	return append(b, '}')
}

// str appends an omitempty string field.
func str(b []byte, name, s string) []byte {
	if s == "" {
		return b
	}
	return jsonenc.String(jsonenc.Key(b, ",", "", name), s)
}

// num appends an omitempty int field.
func num(b []byte, name string, n int) []byte {
	if n == 0 {
		return b
	}
	return jsonenc.Int(jsonenc.Key(b, ",", "", name), n)
}
