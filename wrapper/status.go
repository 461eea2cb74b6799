package wrapper

import (
	"time"

	"github.com/padrun/padrun/marker"
	"github.com/padrun/padrun/marker/ident"
)

// Status is what padrun status says of file: the marker's verdict
// (marker.Inspect), and, when no marker holds it, the harness's own in-use
// lock: a live writer padrun did not start holds it, one that may be alive
// leaves it unknown.
func Status(file string, self ident.Self, now time.Time) marker.Status {
	st := marker.Inspect(file, self, now)
	if !st.Free() {
		return st
	}
	held := inUseHolder(file)
	if held == nil {
		return st
	}
	st.State, st.Holder = marker.Held, held.Holder
	st.Verdict, st.Reason = held.Judgement.Verdict, held.Judgement.Reason
	if st.Verdict != ident.Alive {
		st.State = marker.Unknown
	}
	return st
}
