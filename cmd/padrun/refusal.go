package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/padrun/padrun/marker"
	"github.com/padrun/padrun/wrapper"
	"github.com/padrun/padrun/wrapper/harness"
)

// refusal is the refusal err (a *marker.HeldError, maybe in a
// wrapper.WaitedError) for people, one line each, without the "padrun: "
// prefix. queue is the refused command line with --wait inserted, printed
// quoted for the shell; nil for a refusal inside the harness.
func refusal(err error, now time.Time, queue []string) []string {
	var e *marker.HeldError
	if !errors.As(err, &e) {
		return []string{shown(err.Error())}
	}
	first := "refused: " + e.File + " is in use by another session"
	if e.Kind == marker.HeldOuter {
		first = fmt.Sprintf("refused: %s is held by this run's own outer session (padrun pid %d, its PAD_SESSION_PID)", e.File, e.Holder.Pid)
	}
	lines := []string{
		first,
		"  holder: " + holderOf(e, now),
		"  verdict: " + e.Judgement.String(),
	}
	var waited *wrapper.WaitedError
	if errors.As(err, &waited) {
		lines = append(lines, "hint: waited "+waited.Waited.String()+" for "+holderName(e)+
			", which still holds it; look at it with: padrun status "+harness.ShellQuote(e.File))
	} else {
		lines = append(lines, "hint: "+hint(e, queue))
	}
	for i := range lines {
		lines[i] = shown(lines[i]) // they are also shown inside the harness
	}
	return lines
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
func describe(e *marker.HeldError, now time.Time) string {
	return "held by " + holderOf(e, now) + " (" + e.Judgement.String() + ")"
}

// holderOf describes the holder of a refusal: its marker, or the user
// whose lock padrun cannot open.
func holderOf(e *marker.HeldError, now time.Time) string {
	if e.Holder != nil || e.User == "" {
		return holderLine(e.Holder, now)
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

// holderLine describes a marker's writer for people.
func holderLine(m *marker.Marker, now time.Time) string {
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
	if m.Hostname != "" {
		s += " on host " + m.Hostname
	}
	if t, err := time.Parse(time.RFC3339Nano, m.CreatedAt); err == nil {
		s += fmt.Sprintf(", since %s (%s ago)", t.Local().Format("15:04:05"), age(now.Sub(t)))
	}
	return s
}

func hint(e *marker.HeldError, queue []string) string {
	fork := ""
	if e.Holder != nil {
		if a, ok := harness.Lookup(e.Holder.Harness); ok && a.Held != nil {
			fork = a.Held(harness.ShellQuote(e.File))
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
		return "check it with: padrun status " + harness.ShellQuote(e.File) + "; if no session uses it: padrun unlock --force " + harness.ShellQuote(e.File)
	}
	if fork != "" {
		fork += ", or "
	}
	if len(queue) == 0 {
		return fork + "queue with --wait 10m"
	}
	return fork + "queue: " + shellCommand(queue)
}

// shellCommand quotes argv for a POSIX shell, to be pasted.
func shellCommand(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = harness.ShellQuote(a)
	}
	return strings.Join(q, " ")
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
