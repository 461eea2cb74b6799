package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/padrun/padrun/marker"
	"github.com/padrun/padrun/marker/etcdhold"
	"github.com/padrun/padrun/marker/ident"
	"github.com/padrun/padrun/wrapper"
	"github.com/padrun/padrun/wrapper/harness"
)

// wording is what words a refusal for the people who read it: when, from
// which folder (paths are shown relative to it when that is shorter), on
// which host (a holder here is not named by host), and whether the
// verdict's reasoning is asked for (-v).
type wording struct {
	now     time.Time
	cwd     string
	host    string
	machine string // this machine's id: a holder on another is named by it
	verbose bool
}

// refusal is the refusal err (a *marker.HeldError, maybe in a
// wrapper.WaitedError) for people, one line each, without the "padrun: "
// prefix: the file once, its holder and where it runs, the reasoning only
// under -v, and a hint. queue is the refused command line with --wait
// inserted, printed quoted for the shell; nil for a refusal inside the
// harness, whose hint says what to do there.
func (w wording) refusal(err error, queue []string) []string {
	var e *marker.HeldError
	if !errors.As(err, &e) {
		return []string{shown(err.Error())}
	}
	if w.machine == "" && e.Holder != nil && e.Holder.MachineID != "" {
		w.machine = ident.ReadSelf().MachineID
	}
	file := w.path(e.File)
	first := "refused: " + file + " is in use by another session"
	if e.Kind == marker.HeldOutside {
		first = "refused: " + file + " is in use by a process padrun did not start"
	}
	var inEtcd *etcdhold.HeldError
	if errors.As(err, &inEtcd) && inEtcd.Found != nil {
		first = "refused: " + file + " is held in etcd under " + inEtcd.Found.Key + " by another session"
	}
	if e.Kind == marker.HeldOuter {
		first = fmt.Sprintf("refused: %s is held by this run's own outer session (padrun pid %d, its PAD_SESSION_PID)", file, e.Holder.Pid)
	}
	lines := []string{first, "  holder: " + w.holderOf(e)}
	if w.verbose || e.Holder == nil && e.User == "" { // no holder to name: the reasoning is all there is
		lines = append(lines, "  verdict: "+e.Judgement.String())
	}
	var waited *wrapper.WaitedError
	if errors.As(err, &waited) {
		lines = append(lines, "hint: waited "+waited.Waited.String()+" for "+holderName(e)+
			", which still holds it; look at it with: padrun status "+pasteQuote(file))
	} else {
		lines = append(lines, "hint: "+hint(e, file, queue))
	}
	for i := range lines {
		lines[i] = shown(lines[i]) // they are also shown inside the harness
	}
	return lines
}

// toast is the refusal err of a turn in a TUI (opencode's and kilo's),
// for its toast, which wraps a long line into many: the session once by
// its id (a database's session is no file people name), the holder, and
// what to do in that TUI. The reasoning stays in the log and -v.
func (w wording) toast(err error) []string {
	var e *marker.HeldError
	if !errors.As(err, &e) {
		return []string{shown(err.Error())}
	}
	what := w.path(e.File)
	if harness.IsSessionGuard(e.File) {
		what = "session " + filepath.Base(e.File)
	}
	first := "refused: " + what + " is in use by another session"
	if e.Kind == marker.HeldOutside {
		first = "refused: " + what + " is in use by a process padrun did not start"
	}
	hint := "hint: /new or /sessions for another session; this one is free once its holder ends"
	if e.Kind == marker.HeldUnreadable || e.Kind == marker.HeldStuck && e.Holder != nil {
		hint = "hint: look at it from a shell with padrun status"
	}
	lines := []string{first, "holder: " + w.holderOf(e), hint}
	for i := range lines {
		lines[i] = shown(lines[i])
	}
	return lines
}

// path is file as people in w.cwd would name it: relative when that is
// shorter.
func (w wording) path(file string) string {
	if w.cwd == "" {
		return file
	}
	if rel, err := filepath.Rel(w.cwd, file); err == nil && len(rel) < len(file) {
		return rel
	}
	return file
}

// holderName names a refusal's holder briefly: who to wait for.
func holderName(e *marker.HeldError) string {
	m := e.Holder
	if m == nil && e.User != "" {
		return "a session of " + e.User
	}
	if m == nil {
		return "its holder"
	}
	s := toolPid(m)
	if m.Agent != "" {
		s += fmt.Sprintf(" (agent %q)", m.Agent)
	}
	return s
}

// describe says who holds the file, in one line.
func (w wording) describe(e *marker.HeldError) string {
	s := "held by " + w.holderOf(e)
	if w.verbose {
		s += " (" + e.Judgement.String() + ")"
	}
	return s
}

// holderOf describes the holder of a refusal: its marker, or the user
// whose lock padrun cannot open.
func (w wording) holderOf(e *marker.HeldError) string {
	if e.Holder != nil || e.User == "" {
		return w.holderLine(e.Holder)
	}
	s := "a session of " + e.User
	if e.LockPid > 0 {
		s += fmt.Sprintf(", pid %d holds its lock", e.LockPid)
	}
	return s
}

// toolPid names a marker's writer by its tool and pid.
func toolPid(m *marker.Marker) string {
	tool := m.Tool
	if tool == "" {
		tool = "another tool"
	}
	return fmt.Sprintf("%s pid %d", tool, m.Pid)
}

// holderLine describes a marker's writer for people: who, where (its
// terminal; its host when it is not this one) and since when.
func (w wording) holderLine(m *marker.Marker) string {
	if m == nil {
		return "unknown (no readable marker)"
	}
	s := toolPid(m)
	var in []string
	if m.ChildPid > 0 {
		child := "child "
		if m.Harness != "" && m.Harness != harness.None {
			child += m.Harness + " "
		}
		in = append(in, fmt.Sprintf("%spid %d", child, m.ChildPid))
	}
	if m.Agent != "" {
		in = append(in, fmt.Sprintf("agent %q", m.Agent))
	}
	if len(in) > 0 {
		s += " (" + strings.Join(in, ", ") + ")"
	}
	if m.Tty != "" {
		s += " on " + m.Tty
	}
	if m.Hostname != "" && m.Hostname != w.host {
		s += " on host " + m.Hostname
	}
	if id := ident.NormalizeID(m.MachineID); id != "" && w.machine != "" && id != ident.NormalizeID(w.machine) {
		s += " on machine " + id[:min(8, len(id))]
	}
	if t, err := time.Parse(time.RFC3339Nano, m.CreatedAt); err == nil {
		s += fmt.Sprintf(", since %s (%s ago)", t.Local().Format("15:04:05"), age(w.now.Sub(t)))
	}
	return s
}

// hint says what to do about a refusal of file (as shown): at a shell, a
// command to paste; inside the harness (no queue), what to do there.
func hint(e *marker.HeldError, file string, queue []string) string {
	fork := ""
	if e.Holder != nil {
		if a, ok := harness.Lookup(e.Holder.Harness); ok && a.Held != nil {
			fork = a.Held(pasteQuote(file))
		}
	}
	if e.Kind == marker.HeldOuter {
		// Read inside the session (an agent's own pi -c): what to do there
		// instead, never "without a guard", which would fork the file.
		if fork == "" {
			return "this session writes it: start a new session instead, or guard another file"
		}
		return "this session writes it: start a new session instead, or " + fork
	}
	if e.Kind == marker.HeldUnreadable || (e.Kind == marker.HeldStuck && e.Holder != nil) {
		return "check it with: padrun status " + pasteQuote(file) + "; if no session uses it: padrun unlock --force " + pasteQuote(file)
	}
	if len(queue) == 0 {
		return "open another session here, or come back to this one once its holder has ended"
	}
	if fork != "" {
		fork += ", or "
	}
	return fork + "queue: " + shellCommand(queue)
}

// shellCommand quotes argv for a shell, to be pasted.
func shellCommand(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = pasteQuote(a)
	}
	return strings.Join(q, " ")
}

// pasteQuote quotes s to be pasted into bash or zsh as the same word. A
// word with a control character, a byte that is not UTF-8 or an invisible
// character is quoted $'...' with escapes: single quotes would keep it raw,
// and the message, which shows it escaped, would not paste back to it.
func pasteQuote(s string) string {
	if visible(s) {
		return harness.ShellQuote(s)
	}
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\\' || r == '\'':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r != utf8.RuneError && unicode.IsGraphic(r):
			b.WriteString(s[i : i+n])
		default:
			for _, c := range []byte(s[i : i+n]) {
				fmt.Fprintf(&b, `\x%02x`, c)
			}
		}
		i += n
	}
	b.WriteString("'")
	return b.String()
}

// age says a duration for people: 42s, 12m, 3h05m, 4d.
func age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}
