package registry

import "github.com/padrun/padrun/marker/jsonenc"

// encode returns rec as json.MarshalIndent(rec, "", "  ") writes it, byte
// for byte (FuzzEncode proves it), without encoding/json's reflection on
// the start-up path.
func (rec *Record) encode() []byte {
	o := object{b: make([]byte, 0, 768), indent: "\n  "}
	o.b = append(o.b, '{')
	o.num(rec.SessionPID != 0, "session_pid", rec.SessionPID)
	o.str(rec.SessionPIDSource != "", "session_pid_source", rec.SessionPIDSource)
	if rec.SessionPIDVerified {
		o.b = jsonenc.Bool(o.key("session_pid_verified"), true)
	}
	o.str(rec.ProcStart != "", "proc_start", string(rec.ProcStart))
	o.str(rec.SessionID != "", "session_id", rec.SessionID)
	o.str(rec.Agent != "", "agent", rec.Agent)
	o.num(true, "pid", rec.Pid)
	o.str(rec.Cwd != "", "cwd", rec.Cwd)
	o.str(rec.RegisteredAt != "", "registered_at", rec.RegisteredAt)
	if p := rec.Padrun; p != nil {
		o.b = append(o.key("padrun"), '{')
		in := object{b: o.b, indent: "\n    "}
		in.str(true, "version", p.Version)
		in.str(p.Harness != "", "harness", p.Harness)
		in.str(p.Mode != "", "mode", p.Mode)
		in.strs("session_files", p.SessionFiles)
		in.strs("markers", p.Markers)
		in.num(p.ChildPid != 0, "child_pid", p.ChildPid)
		in.str(p.ChildProcStart != "", "child_proc_start", string(p.ChildProcStart))
		in.num(p.ParentSessionPid != 0, "parent_session_pid", p.ParentSessionPid)
		in.str(true, "command", p.Command)
		if len(p.WaitingFor) > 0 {
			in.strs("waiting_for", p.WaitingFor)
		}
		in.str(p.PidNamespace != "", "pid_namespace", p.PidNamespace)
		in.str(p.TimeNamespace != "", "time_namespace", p.TimeNamespace)
		o.b = append(in.b, "\n  }"...)
	}
	return append(o.b, "\n}"...)
}

// object appends the fields of an indented JSON object.
type object struct {
	b      []byte
	indent string // a newline and the fields' indent
	fields int
}

// key appends the next field's name.
func (o *object) key(name string) []byte {
	sep := ""
	if o.fields > 0 {
		sep = ","
	}
	o.fields++
	return append(jsonenc.Key(o.b, sep, o.indent, name), ' ')
}

func (o *object) str(keep bool, name, s string) {
	if keep {
		o.b = jsonenc.String(o.key(name), s)
	}
}

func (o *object) num(keep bool, name string, n int) {
	if keep {
		o.b = jsonenc.Int(o.key(name), n)
	}
}

// strs appends a list of strings, which is never omitted: null when nil.
func (o *object) strs(name string, list []string) {
	o.b = o.key(name)
	switch {
	case list == nil:
		o.b = append(o.b, "null"...)
		return
	case len(list) == 0:
		o.b = append(o.b, "[]"...)
		return
	}
	o.b = append(o.b, '[')
	for i, s := range list {
		if i > 0 {
			o.b = append(o.b, ',')
		}
		o.b = jsonenc.String(append(append(o.b, o.indent...), "  "...), s)
	}
	o.b = append(append(o.b, o.indent...), ']')
}
