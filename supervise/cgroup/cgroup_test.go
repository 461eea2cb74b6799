package cgroup

import (
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/padrun/padrun/marker/ident"
)

// TestDeadTag: a session cgroup goes only when its name proves its padrun
// gone: this pid namespace's, or an unnamed one a minute old.
func TestDeadTag(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("pid namespaces and start tokens as the cgroups name them are Linux's")
	}
	self := ident.ReadSelf()
	if self.PidNamespace == "" || self.StartToken == "" {
		t.Fatal("no pid namespace or start token read")
	}
	if self.TimeNamespace == "" {
		t.Skip("no time namespaces on this kernel (Linux 5.6 made them)")
	}
	now := time.Now()
	old, fresh := now.Add(-2*minAge), now
	pid := strconv.Itoa(self.Pid)
	reused := pid + "-1" // this pid, another start: a dead padrun's
	pidns, timens, start := string(self.PidNamespace), string(self.TimeNamespace), string(self.StartToken)
	ns := "-" + pidns + "-" + timens
	for _, c := range []struct {
		tag  string
		made time.Time
		want bool
	}{
		{Tag(self), old, false},                   // alive: this process
		{reused + ns, fresh, true},                // dead, these namespaces: at once
		{reused + "-1", old, false},               // another pid namespace's
		{reused + "-" + pidns + "-1", old, false}, // another time namespace's: its start read shifted
		{reused + "-" + pidns, fresh, false},      // unnamed time namespace, young
		{reused + "-" + pidns, old, true},         // unnamed time namespace, a minute old
		{reused, fresh, false},                    // unnamed namespaces, young
		{reused, old, true},                       // unnamed namespaces, a minute old
		{pid + "-" + start, old, false},           // unnamed, alive
		{pid + "-" + start + ns, old, false},      // named, alive
		{"", old, false}, {"x", old, false}, {"0-1", old, false}, {"-5-1", old, false}, {"05-1", old, false},
		{"+5-1", old, false}, {pid + "-", old, false}, {reused + ns + "-2", old, false},
	} {
		if got := deadTag(c.tag, c.made, self, now); got != c.want {
			t.Errorf("deadTag(%q, made %v ago) = %v, want %v", c.tag, now.Sub(c.made), got, c.want)
		}
	}
}

// A Clock does not count the time the session waited for the machine, up
// to MaxStretch times its wait; without a stall source it is wall-clock
// time.
func TestClock_StallsDoNotCount(t *testing.T) {
	const wait = time.Hour
	var stalled time.Duration
	c := StartClock(wait, func() time.Duration { return stalled })
	c.from = c.from.Add(-wait) // an hour of wall-clock time has passed
	if left := c.Left(); left != 0 {
		t.Fatalf("an hour's clock never stalled has %s left after an hour", left)
	}
	stalled = 30 * time.Minute
	if left := c.Left(); left < 29*time.Minute || left > 30*time.Minute {
		t.Fatalf("left %s after an hour of which half waited, want about 30m", left)
	}
	stalled = 10 * wait
	if left := c.Left(); left <= 0 {
		t.Fatalf("left %s within the stretch", left)
	}
	c.from = c.from.Add(-(MaxStretch - 1) * wait)
	if left := c.Left(); left != 0 {
		t.Fatalf("left %s after %d times the wait: the stretch is unbounded", left, MaxStretch)
	}
	wall := StartClock(wait, nil)
	wall.from = wall.from.Add(-wait)
	if left := wall.Left(); left != 0 {
		t.Fatalf("a wall-clock clock has %s left after its wait", left)
	}
}
