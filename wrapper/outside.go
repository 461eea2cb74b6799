package wrapper

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/padrun/padrun/marker"
	"github.com/padrun/padrun/marker/ident"
	"github.com/padrun/padrun/wrapper/harness"
)

// Writers padrun did not start (docs/spec.md §5 rule 9): before the run
// takes a session, it looks for a live writer of it outside padrun, by
// what the harness leaves of its live sessions (harness.LiveRecords) and by
// one pass over the process table (procWriters), whose harness processes
// the adapters' own rules resolve to their sessions. Found: a refusal
// (marker.HeldOutside); not provable either way: a warning, a refusal under
// --strict.

// outsider is a live process of a harness that the run did not start, and
// what it writes.
type outsider struct {
	pid     int
	harness string
	command string    // its command's base name
	files   []string  // canonical
	folders []string  // canonical: its command line was erased (pi)
	foreign string    // another user's, whose folder or environment cannot be read: who
	session int       // the live padrun whose session it runs in (its PAD_SESSION_PID); 0: none
	uid     int       // its owner, for foreign
	since   time.Time // when it started; zero when unknown
}

// outsideLook is one pass over the process table, shared by every file one
// acquire attempt (or one claim) takes.
type outsideLook struct {
	writers []outsider
	err     error // no process table to look at
	done    bool
	// ready is closed when a pass that lookAhead started has ended; nil
	// for a pass made on first use.
	ready chan struct{}
}

// lookAhead starts the pass of the run's first acquire beside the rest of
// its start: it needs only the run's own identity, and a writer that
// starts after it began could as well start after the acquire (the watch
// is for those). A run that guards nothing makes none.
func lookAhead(self ident.Self) *outsideLook {
	look := &outsideLook{ready: make(chan struct{})}
	go func() {
		defer close(look.ready)
		look.writers, look.err = procWriters(self)
	}()
	return look
}

// outsideHeld is the refusal of file, which the run has just taken, when a
// live writer outside padrun has it open; a writer that cannot be proven
// either way is said (refused under --strict). look is filled on first
// use. The caller holds s.mu, or runs before the child starts.
func (s *session) outsideHeld(look *outsideLook, file string) error {
	for _, r := range harness.LiveRecords(file) {
		if ofTree(r.Pid, s.self.Pid) {
			continue
		}
		if err := s.recordHeld(file, r); err != nil {
			return err
		}
	}
	if look.ready != nil {
		<-look.ready
		look.ready, look.done = nil, true
	}
	if !look.done {
		start := time.Now()
		look.writers, look.err = procWriters(s.self)
		look.done = true
		s.o.Log.Debug().Int("harnesses", len(look.writers)).Dur("took", time.Since(start)).Msg("looked for writers outside padrun")
	}
	if look.err != nil {
		s.o.Log.Debug().Err(look.err).Msg("writers outside padrun not looked for")
		return nil
	}
	for _, w := range look.writers {
		switch {
		case slices.Contains(w.files, file):
			how := w.harness + " run without padrun,"
			if w.session > 0 {
				how = fmt.Sprintf("%s started inside padrun session pid %d, which does not hold it,", w.harness, w.session)
			}
			return outsideRefusal(file, w, marker.Judgement{Verdict: ident.Alive,
				Reason: fmt.Sprintf("%s, %s writes this session (its command line and folder name it)", ident.Name(w.pid), how)})
		case w.session > 0:
			// A harness of a padrun session that padrun cannot read: its
			// session is that padrun's to guard.
		case slices.Contains(w.folders, filepath.Dir(file)):
			if err := s.unprovable(file, w, fmt.Sprintf("%s, %s run without padrun, works in this session's folder and %s erases its command line: padrun cannot tell which session it writes",
				ident.Name(w.pid), w.harness, w.harness)); err != nil {
				return err
			}
		case w.foreign != "" && mayWrite(w.uid, file):
			if err := s.unprovable(file, w, fmt.Sprintf("%s, %s of %s, may write this session: padrun cannot read its folder or environment",
				ident.Name(w.pid), w.harness, w.foreign)); err != nil {
				return err
			}
		}
	}
	return nil
}

// recordHeld judges the writer of a harness's record of a live session
// of file: alive refuses, unknown is said (refused under --strict), dead
// is left to the harness.
func (s *session) recordHeld(file string, r harness.LiveRecord) error {
	w := outsider{pid: r.Pid, harness: r.Harness, command: r.Harness, since: r.Since}
	if why := otherDomain(r.PidDomain, s.self); why != "" {
		return s.unprovable(file, w, fmt.Sprintf("%s keeps a record of pid %d having this session open (%s), counted %s: padrun cannot check it",
			r.Harness, r.Pid, filepath.Base(r.Path), why))
	}
	j := marker.Local(r.Pid, r.ProcStart)
	switch j.Verdict {
	case ident.Dead:
		return nil
	case ident.Alive:
		j.Reason = fmt.Sprintf("%s, %s run without padrun, has this session open (its own record %s): %s",
			ident.Name(r.Pid), r.Harness, filepath.Base(r.Path), j.Reason)
		return outsideRefusal(file, w, j)
	}
	return s.unprovable(file, w, fmt.Sprintf("%s keeps a record of pid %d having this session open (%s): %s", r.Harness, r.Pid, filepath.Base(r.Path), j.Reason))
}

// otherDomain says where a recorded pid counts when it is not this
// machine's boot and pid namespace ("linux:<machine id>:pid:[<inode>]");
// "" when it is, or when nothing says.
func otherDomain(domain string, self ident.Self) string {
	if domain == "" {
		return ""
	}
	id, ns, ok := strings.Cut(strings.TrimPrefix(domain, "linux:"), ":pid:[")
	ns = strings.TrimSuffix(ns, "]")
	switch {
	case !ok:
		return ""
	case self.MachineID != "" && !strings.EqualFold(strings.ReplaceAll(id, "-", ""), strings.ReplaceAll(string(self.MachineID), "-", "")):
		return "on another machine"
	case self.PidNamespace != "" && ns != string(self.PidNamespace):
		return "in another pid namespace"
	}
	return ""
}

// unprovable says that w may write file, which padrun cannot prove either
// way; under --strict it is a refusal.
func (s *session) unprovable(file string, w outsider, why string) error {
	if s.o.Strict {
		return outsideRefusal(file, w, marker.Judgement{Verdict: ident.Unknown, Reason: why + ", and --strict is set"})
	}
	s.o.Log.Warn().Str("file", file).Msg(why + ": going on (--strict refuses)")
	return nil
}

// outsideRefusal is the refusal of file for w. A waiter polls: w's end
// ends it.
func outsideRefusal(file string, w outsider, j marker.Judgement) *marker.HeldError {
	m := &marker.Marker{ID: ident.ID{Pid: w.pid}, Tool: w.harness, Harness: w.harness, SessionFile: file, UID: -1}
	if !w.since.IsZero() {
		m.CreatedAt = w.since.UTC().Format(time.RFC3339Nano)
	}
	return &marker.HeldError{File: file, Kind: marker.HeldOutside, Judgement: j, Holder: m}
}
