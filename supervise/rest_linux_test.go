package supervise

import (
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/padrun/padrun/supervise/cgroup"
	"github.com/padrun/padrun/supervise/childtest"
	"github.com/padrun/padrun/supervise/reap"
)

func init() {
	helpers["leave"] = func() { leaveGrandchild("hang", nil) }
	helpers["leave-ignoring-term"] = func() { leaveGrandchild("ignore-term", nil) }
	// A grandchild that ends once its parent is gone (its stdin is a pipe
	// only the parent writes), as a git the harness started ends its
	// command just after the harness exits.
	helpers["leave-finishing"] = func() {
		r, w, err := os.Pipe()
		if err != nil {
			os.Exit(2)
		}
		leaveGrandchild("until-eof", r)
		runtime.KeepAlive(w) // held open to the exit
	}
	helpers["until-eof"] = func() {
		ready()
		io.Copy(io.Discard, os.Stdin)   // until the child that started it is gone
		finish := 20 * time.Millisecond // then finish its command (well within settle)
		if d, err := time.ParseDuration(os.Getenv("FINISH")); err == nil {
			finish = d
		}
		time.Sleep(finish)
	}
}

// leaveGrandchild, a helper, starts helper mode as a grandchild in a
// session of its own, with stdin when set, writes its pid to $GRANDCHILD
// once it is ready, and returns: the helper then exits.
func leaveGrandchild(mode string, stdin *os.File) {
	gready := os.Getenv("READY") + ".grandchild"
	cmd := childtest.Command(mode)
	cmd.Env = append(cmd.Env, "READY="+gready)
	if stdin != nil {
		cmd.Stdin = stdin
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		os.Exit(2)
	}
	for {
		if _, err := os.Stat(gready); err == nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	os.WriteFile(os.Getenv("GRANDCHILD"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o600)
}

// leave starts a helper that leaves a grandchild in a session of its own
// and exits; it returns the child, reaped, and the grandchild's pid.
func leave(t *testing.T, mode string, cg *cgroup.Session) (*Child, int) {
	s, _ := helper(t, mode)
	gc := filepath.Join(t.TempDir(), "grandchild")
	s.Env = append(s.Env, "GRANDCHILD="+gc)
	s.Cgroup = cg
	c, err := Start(s)
	if err != nil {
		t.Fatal(err)
	}
	if st := c.Supervise(nil, grace, 0); st.Code != 0 {
		t.Fatalf("helper ended with %+v", st)
	}
	b, err := os.ReadFile(gc)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(string(b))
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	return c, pid
}

func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z"
}

// What the child left in a session of its own is found (padrun is its
// subreaper) and ended by TERM; padrun's own os/exec child is not the
// session's, and is left running.
func TestEndRest_EndsWhatTheChildLeft(t *testing.T) {
	own := exec.Command("sleep", "60")
	if err := reap.Start(own); err != nil {
		t.Fatal(err)
	}
	defer reap.Wait(own)
	defer own.Process.Kill()
	c, pid := leave(t, "leave", nil)
	var found []int
	if left := c.EndRest(time.Minute, func(p []int) { found = p }); len(left) > 0 {
		t.Fatalf("survivors %v", left)
	}
	if len(found) != 1 || found[0] != pid {
		t.Fatalf("found %v, want [%d]", found, pid)
	}
	if alive(pid) {
		t.Fatalf("pid %d still alive", pid)
	}
	if !alive(own.Process.Pid) {
		t.Fatalf("padrun's own child %d was ended", own.Process.Pid)
	}
}

// What ends on its own just after the child was not left running: nobody
// is told of it and nothing is signalled.
func TestEndRest_WhatFinishesIsNotLeft(t *testing.T) {
	childtest.Env("until-eof") // the grandchild leave-finishing starts
	c, pid := leave(t, "leave-finishing", nil)
	if left := c.EndRest(time.Hour, func(p []int) { t.Errorf("found %v, which ends on its own", p) }); len(left) > 0 {
		t.Fatalf("survivors %v", left)
	}
	if alive(pid) {
		t.Fatalf("pid %d still alive", pid)
	}
}

// On a loaded machine what ends on its own takes longer: the time the
// session waited for the machine is not on settle's clock, up to
// cgroup.MaxStretch times it. A grandchild that takes twice settle to
// finish is not left running when the session waited all along, and is
// when it never waited.
func TestEndRest_StallsDoNotCount(t *testing.T) {
	late := (2 * settle).String()
	for _, tc := range []struct {
		name   string
		waited bool
	}{{"waited all along", true}, {"never waited", false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("FINISH", late) // the grandchild's, through the child's environment
			childtest.Env("until-eof")
			c, pid := leave(t, "leave-finishing", nil)
			from := time.Now()
			c.stalled = func() time.Duration { return 0 }
			if tc.waited {
				c.stalled = func() time.Duration { return time.Since(from) }
			}
			var found []int
			c.EndRest(time.Hour, func(p []int) { found = p })
			switch {
			case tc.waited && len(found) > 0:
				t.Fatalf("found %v, which ends on its own within the stretched settle", found)
			case !tc.waited && (len(found) != 1 || found[0] != pid):
				t.Fatalf("found %v, want [%d]: settle's clock stretched with no wait", found, pid)
			}
		})
	}
}

// One that ignores TERM is killed after the grace period.
func TestEndRest_KillsAfterGrace(t *testing.T) {
	c, pid := leave(t, "leave-ignoring-term", nil)
	if left := c.EndRest(grace, nil); len(left) > 0 {
		t.Fatalf("survivors %v", left)
	}
	if alive(pid) {
		t.Fatalf("pid %d still alive", pid)
	}
}

// A child that leaves nothing: nothing is found and nothing waited for.
func TestEndRest_NothingLeft(t *testing.T) {
	s, _ := helper(t, "exit7")
	c, err := Start(s)
	if err != nil {
		t.Fatal(err)
	}
	c.Supervise(nil, grace, 0)
	if left := c.EndRest(time.Hour, func(p []int) { t.Errorf("found %v", p) }); len(left) > 0 {
		t.Fatalf("survivors %v", left)
	}
}

func newCgroup(t *testing.T) *cgroup.Session {
	tr := cgroup.New("test-" + strconv.Itoa(os.Getpid()) + "-" + strings.ReplaceAll(t.Name(), "/", "-"))
	if tr == nil {
		if os.Getenv("CI") != "" {
			t.Fatal("no cgroup v2 of padrun's own can be made here, and CI is set")
		}
		t.Skip("no cgroup v2 of padrun's own can be made here (needs root or a delegated subtree)")
	}
	tr.Make()
	t.Cleanup(func() { tr.Remove() })
	return tr
}

// In a cgroup, what the child left is found there and ended by
// cgroup.kill after the grace; the cgroup can then be removed.
func TestEndRest_Cgroup(t *testing.T) {
	tr := newCgroup(t)
	c, pid := leave(t, "leave-ignoring-term", tr)
	if c.Cgroup != tr.Path {
		t.Fatalf("child not in the cgroup: %q", c.Cgroup)
	}
	var found []int
	if left := c.EndRest(grace, func(p []int) { found = p }); len(left) > 0 {
		t.Fatalf("survivors %v", left)
	}
	if len(found) != 1 || found[0] != pid || alive(pid) {
		t.Fatalf("found %v, want [%d] and gone", found, pid)
	}
	if !tr.Remove() {
		t.Fatal("the empty cgroup was not removed")
	}
}

// Shutdown: after the grace every process of the session is killed, a
// grandchild in a session of its own too, not only the child's group.
func TestSupervise_GraceKillsEveryProcessOfTheSession(t *testing.T) {
	for _, withCgroup := range []bool{false, true} {
		t.Run(map[bool]string{false: "subreaper", true: "cgroup"}[withCgroup], func(t *testing.T) {
			var tr *cgroup.Session
			if withCgroup {
				tr = newCgroup(t)
			}
			s, readyFile := helper(t, "ignore-term")
			s.Cgroup = tr
			c, err := Start(s)
			if err != nil {
				t.Fatal(err)
			}
			waitReady(t, readyFile)
			// A grandchild: the helper's own child would be ideal; here a
			// process padrun adopts stands in, started in its own session.
			s2, ready2 := helper(t, "ignore-term")
			s2.Cgroup = tr
			g, err := Start(s2)
			if err != nil {
				t.Fatal(err)
			}
			waitReady(t, ready2)
			sigs := make(chan os.Signal, 1)
			sigs <- syscall.SIGTERM
			if st := c.Supervise(sigs, grace, 0); st.Signal != syscall.SIGKILL {
				t.Fatalf("status %+v, want KILL", st)
			}
			g.Supervise(nil, grace, 0) // reaps it: killed with the session
			if alive(g.Pid) {
				t.Fatalf("pid %d outlived the session's KILL", g.Pid)
			}
		})
	}
}

// Orphans that die while the child runs are reaped at once, not left as
// padrun's zombies until it exits.
func TestSupervise_ReapsOrphansWhileTheChildRuns(t *testing.T) {
	s, readyFile := helper(t, "trap-term")
	c, err := Start(s)
	if err != nil {
		t.Fatal(err)
	}
	waitReady(t, readyFile)
	sigs := make(chan os.Signal, 1)
	res := make(chan Status, 1)
	go func() { res <- c.Supervise(sigs, time.Minute, 0) }()
	// An orphan stands in: a child of padrun that is not the child.
	o, ready2 := helper(t, "hang")
	orphan, err := Start(o)
	if err != nil {
		t.Fatal(err)
	}
	waitReady(t, ready2)
	syscall.Kill(orphan.Pid, syscall.SIGKILL)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat("/proc/" + strconv.Itoa(orphan.Pid)); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("orphan %d left a zombie while the child ran", orphan.Pid)
		}
		time.Sleep(time.Millisecond)
	}
	sigs <- syscall.SIGTERM
	if st := <-res; st.Code != 0 {
		t.Fatalf("child ended with %+v", st)
	}
}

// A session that left nothing: EndRest finds its cgroup empty by removing
// it (one rmdir, which the kernel refuses while any process lives there),
// and Remove then has nothing left to do.
func TestEndRest_EmptyCgroupRemovedAtOnce(t *testing.T) {
	tr := newCgroup(t)
	s, _ := helper(t, "exit7")
	s.Cgroup = tr
	c, err := Start(s)
	if err != nil {
		t.Fatal(err)
	}
	if c.Cgroup != tr.Path {
		t.Fatalf("child not in the cgroup: %q", c.Cgroup)
	}
	if st := c.Supervise(nil, grace, 0); st.Code != 7 {
		t.Fatalf("status %+v, want exit 7", st)
	}
	if left := c.EndRest(time.Hour, func(p []int) { t.Errorf("found %v", p) }); len(left) > 0 {
		t.Fatalf("survivors %v", left)
	}
	if _, err := os.Stat(tr.Path); !os.IsNotExist(err) {
		t.Fatalf("the empty cgroup is still there after EndRest: %v", err)
	}
	if !tr.Remove() {
		t.Fatal("Remove of a removed cgroup failed")
	}
}

// reapRounds is how many os/exec children TestReap_OwnChildrenKeepTheirWait
// starts while the session's orphans die beside them.
var reapRounds = flag.Int("reap-rounds", 200, "os/exec children started while orphans die (TestReap_OwnChildrenKeepTheirWait)")

// While the session's orphans die (each a zombie of padrun, their
// subreaper, reaped as it comes), padrun's own os/exec children are left
// to their Wait: none fails with "no child processes", and every orphan is
// reaped. A reap of any child took about one wait in five.
func TestReap_OwnChildrenKeepTheirWait(t *testing.T) {
	done := filepath.Join(t.TempDir(), "done")
	c, err := Start(Spec{Path: "/bin/sh", Args: []string{"sh", "-c", `while [ ! -e "$1" ]; do (/bin/true &); done`, "sh", done}, Env: os.Environ()})
	if err != nil {
		t.Fatal(err)
	}
	failed := make(chan []string, 1)
	go func() {
		var errs []string
		for range *reapRounds {
			cmd := exec.Command("/bin/true")
			if err := reap.Start(cmd); err != nil {
				errs = append(errs, err.Error())
				continue
			}
			if err := reap.Wait(cmd); err != nil {
				errs = append(errs, err.Error())
			}
		}
		os.WriteFile(done, nil, 0o600)
		failed <- errs
	}()
	if st := c.Supervise(nil, grace, 0); st.Code != 0 {
		t.Fatalf("the shell ended with %+v", st)
	}
	if errs := <-failed; len(errs) > 0 {
		t.Fatalf("%d of %d waits failed, first: %s", len(errs), *reapRounds, errs[0])
	}
	// The last orphans may still run as the shell ends; each is reaped once
	// it exits.
	for deadline := time.Now().Add(10 * time.Second); reap.Left(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("children left unreaped: %s", readChildren())
		}
	}
}

func readChildren() string {
	var out []string
	tasks, _ := os.ReadDir("/proc/self/task")
	for _, task := range tasks {
		b, _ := os.ReadFile("/proc/self/task/" + task.Name() + "/children")
		out = append(out, strings.Fields(string(b))...)
	}
	return strings.Join(out, " ")
}
