package wrapper

import (
	"fmt"
	"strings"
	"time"

	"github.com/padrun/padrun/marker"
)

// Refusal is the refusal for people, one line each, without the "padrun: "
// prefix.
func Refusal(e *marker.HeldError, now time.Time) []string {
	first := "refused: " + e.File + " is in use by another session"
	if e.Outer {
		first = fmt.Sprintf("refused: %s is held by this run's own outer session (padrun pid %d, its PAD_SESSION_PID)", e.File, e.Holder.Pid)
	}
	lines := []string{
		first,
		"  holder: " + holderOf(e, now),
		"  verdict: " + e.Judgement.String(),
	}
	return append(lines, "hint: "+hint(e))
}

// Describe says who holds the file, in one line.
func Describe(e *marker.HeldError, now time.Time) string {
	return "held by " + holderOf(e, now) + " (" + e.Judgement.String() + ")"
}

// holderOf describes the holder of a refusal: its marker, or the user
// whose lock padrun cannot open.
func holderOf(e *marker.HeldError, now time.Time) string {
	if e.Holder != nil || e.User == "" {
		return HolderLine(e.Holder, now)
	}
	s := "a session of " + e.User
	if e.LockPid > 0 {
		s += fmt.Sprintf(", pid %d holds its lock", e.LockPid)
	}
	return s
}

// HolderLine describes a marker's writer for people.
func HolderLine(m *marker.Marker, now time.Time) string {
	if m == nil {
		return "unknown (no readable marker)"
	}
	tool := m.Tool
	if tool == "" {
		tool = "another tool"
	}
	s := fmt.Sprintf("%s pid %d", tool, m.Pid)
	var in []string
	if m.ChildPid > 0 {
		child := "child "
		if m.Harness != "" && m.Harness != "none" {
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

func hint(e *marker.HeldError) string {
	if e.Outer {
		return "the outer session already holds " + e.File + ": run the command there without a second guard, or guard another file"
	}
	if e.Unreadable || (!e.Waitable && e.Holder != nil) {
		return "check it with: padrun status " + e.File + "; if no session uses it: padrun unlock --force " + e.File
	}
	fork := ""
	if e.Holder != nil && e.Holder.Harness == "pi" {
		fork = "fork it instead (pi --fork " + e.File + "), or "
	}
	return fork + "queue: padrun --wait 10m -- ..."
}

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
