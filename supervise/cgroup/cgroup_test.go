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
