package wrapper

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/padrun/padrun/marker"
	"github.com/padrun/padrun/marker/ident"
)

// fakeProc is one process of a fake table.
type fakeProc struct {
	exe     string // "" for a kernel thread
	cmdline string // NUL-separated, as /proc has it
	cwd     string // "" when it cannot be read
	env     []string
	uid     int
	own     bool // of the run's own tree
}

// fakeProcs is a process table of fakeProcs, which records what was read
// beyond command lines.
type fakeProcs struct {
	procs map[int]fakeProc
	read  []int // pids whose folder or environment was read
}

func (f *fakeProcs) pids() ([]int, error) {
	var pids []int
	for pid := range f.procs {
		pids = append(pids, pid)
	}
	slices.Sort(pids)
	return pids, nil
}

func (f *fakeProcs) exe(pid int, buf []byte) ([]byte, error) {
	p, ok := f.procs[pid]
	switch {
	case !ok || p.exe == "":
		return nil, os.ErrNotExist
	case p.exe == "EACCES":
		return nil, os.ErrPermission
	}
	return []byte(p.exe), nil
}

func (f *fakeProcs) cmdline(pid int, buf []byte, whole bool) ([]byte, error) {
	p, ok := f.procs[pid]
	if !ok {
		return nil, os.ErrNotExist
	}
	if !whole && len(p.cmdline) > len(buf) {
		return []byte(p.cmdline[:len(buf)]), nil
	}
	return []byte(p.cmdline), nil
}

func (f *fakeProcs) cwd(pid int) (string, error) {
	f.read = append(f.read, pid)
	if p := f.procs[pid]; p.cwd != "" {
		return p.cwd, nil
	}
	return "", os.ErrPermission
}

func (f *fakeProcs) environ(pid int) ([]byte, error) {
	p := f.procs[pid]
	if p.cwd == "" {
		return nil, os.ErrPermission
	}
	return []byte(strings.Join(p.env, "\x00") + "\x00"), nil
}

func (f *fakeProcs) owner(pid int) (int, bool)     { return f.procs[pid].uid, true }
func (f *fakeProcs) skip(pid int) bool             { return f.procs[pid].own }
func (f *fakeProcs) started(int) (time.Time, bool) { return time.Time{}, false }
func nul(args ...string) string                    { return strings.Join(args, "\x00") + "\x00" }
func writerOf(ws []outsider, pid int) (outsider, bool) {
	i := slices.IndexFunc(ws, func(w outsider) bool { return w.pid == pid })
	if i < 0 {
		return outsider{}, false
	}
	return ws[i], true
}

func TestOutside_ProcTable_ResolvesByTheAdaptersRules(t *testing.T) {
	root, err := Resolve(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := filepath.Join(root, "w")
	cfg := filepath.Join(root, "cfg")
	agent := filepath.Join(root, "agent")
	for _, d := range []string{w, cfg, filepath.Join(agent, "sessions", "--"+strings.ReplaceAll(strings.TrimPrefix(w, "/"), "/", "-")+"--")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	id := "55555555-5555-4555-8555-555555555555"
	home := "HOME=" + root
	f := &fakeProcs{procs: map[int]fakeProc{
		10: {exe: "/h/.local/share/claude/versions/2.1.332", cmdline: nul("claude", "-p", "--resume", id, "x"), cwd: w, env: []string{home, "CLAUDE_CONFIG_DIR=" + cfg}},
		11: {exe: "/n/bin/node", cmdline: nul("/n/bin/node", "--expose-gc", "/n/node_modules/@qwen-code/qwen-code/cli.js", "--resume", id, "-p", "x"), cwd: w, env: []string{home, "QWEN_HOME=" + filepath.Join(root, "q")}},
		12: {exe: "/usr/bin/node", cmdline: "pi" + strings.Repeat("\x00", 40), cwd: w, env: []string{home, "PI_CODING_AGENT_DIR=" + agent}},
		13: {exe: "/usr/bin/sleep", cmdline: nul("sleep", "100"), cwd: w},
		14: {exe: "/x/node_modules/@anthropic-ai/claude-code/bin/claude.exe", cmdline: nul("claude", "-p", "--resume", id), cwd: w, env: []string{home, "CLAUDE_CONFIG_DIR=" + cfg}, own: true},
		15: {exe: "EACCES", cmdline: nul("codex", "exec", "resume", id), uid: os.Geteuid() + 1},
		16: {cmdline: ""}, // a kernel thread
		20: {exe: "/usr/bin/node", cmdline: "pi" + strings.Repeat("\x00", 40), cwd: w, env: []string{home, "PI_CODING_AGENT_DIR=" + agent, "PAD_SESSION_PID=" + strconv.Itoa(os.Getpid())}},
		19: {exe: "/usr/bin/sh", cmdline: nul("claude", "-p")}, // an exe padrun passes over
		17: {exe: "/usr/bin/node", cmdline: nul("node", "-e", "x"), cwd: w},
		18: {exe: "/usr/bin/nodejs", cmdline: nul("/x/node_modules/.bin/gemini", "-p", "x"), cwd: w, env: []string{home}},
	}}
	ws, err := matchProcs(f, make([]byte, 16))
	if err != nil {
		t.Fatal(err)
	}
	c, ok := writerOf(ws, 10)
	if want := filepath.Join(cfg, "projects", regexp.MustCompile("[^a-zA-Z0-9]").ReplaceAllString(w, "-"), id+".jsonl"); !ok || c.harness != "claude" || !slices.Contains(c.files, want) {
		t.Errorf("claude: %+v, want %s", c, want)
	}
	q, ok := writerOf(ws, 11)
	if !ok || q.harness != "qwen" || len(q.files) != 1 || !strings.HasSuffix(q.files[0], "/chats/"+id+".jsonl") || !strings.HasPrefix(q.files[0], filepath.Join(root, "q")) {
		t.Errorf("qwen behind node: %+v", q)
	}
	p, ok := writerOf(ws, 12)
	if !ok || p.harness != "pi" || len(p.files) != 0 || len(p.folders) != 1 || !strings.HasPrefix(p.folders[0], filepath.Join(agent, "sessions")) {
		t.Errorf("pi, its command line erased: %+v", p)
	}
	if p, ok := writerOf(ws, 20); !ok || p.session != os.Getpid() || len(p.folders) != 1 {
		t.Errorf("pi of a padrun session: %+v", p)
	}
	x, ok := writerOf(ws, 15)
	if !ok || x.harness != "codex" || x.foreign == "" || len(x.files) != 0 {
		t.Errorf("another user's codex: %+v", x)
	}
	if g, ok := writerOf(ws, 18); !ok || g.harness != "gemini" {
		t.Errorf("gemini by its own name: %+v", g)
	}
	for _, pid := range []int{13, 14, 16, 17, 19} {
		if w, ok := writerOf(ws, pid); ok {
			t.Errorf("pid %d: %+v, want left out", pid, w)
		}
		if slices.Contains(f.read, pid) {
			t.Errorf("pid %d: its folder was read", pid)
		}
	}
}

func TestOutside_OtherDomain(t *testing.T) {
	self := ident.Self{ID: ident.ID{MachineID: "3d1219c7c4c5404aaa1f6d2a48adfda4", PidNamespace: "4026531836"}}
	for domain, want := range map[string]string{
		"": "", "linux:3d1219c7c4c5404aaa1f6d2a48adfda4:pid:[4026531836]": "",
		"linux:3D1219C7-C4C5-404A-AA1F-6D2A48ADFDA4:pid:[4026531836]": "",
		"linux:ffffffffffffffffffffffffffffffff:pid:[4026531836]":     "on another machine",
		"linux:3d1219c7c4c5404aaa1f6d2a48adfda4:pid:[4026532000]":     "in another pid namespace",
		"linux": "",
	} {
		if got := otherDomain(domain, self); got != want {
			t.Errorf("%q: %q, want %q", domain, got, want)
		}
	}
}

// TestOutside_Held_RefusesAWriterSaysTheUnprovable: a writer of the file
// refuses it (HeldOutside, waitable); a pi whose command line is erased in
// its folder, or another user's harness that may write it, is said and goes
// on, and refuses under --strict; a writer of another file, or a harness of
// a padrun session that padrun cannot read, says nothing.
func TestOutside_Held_RefusesAWriterSaysTheUnprovable(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "s.jsonl")
	os.WriteFile(file, nil, 0o600)
	for _, tc := range []struct {
		name   string
		w      outsider
		strict bool
		want   string // refused, said or nothing
	}{
		{"writer", outsider{pid: 7, harness: "codex", files: []string{file}}, false, "refused"},
		{"another file", outsider{pid: 7, harness: "codex", files: []string{file + "x"}}, true, "nothing"},
		{"erased", outsider{pid: 7, harness: "pi", folders: []string{dir}}, false, "said"},
		{"erased strict", outsider{pid: 7, harness: "pi", folders: []string{dir}}, true, "refused"},
		{"erased, a padrun session's", outsider{pid: 7, harness: "pi", folders: []string{dir}, session: 9}, true, "nothing"},
		{"foreign", outsider{pid: 7, harness: "pi", foreign: "user x (uid 4242)", uid: os.Geteuid()}, false, "said"},
		{"foreign, cannot write", outsider{pid: 7, harness: "pi", foreign: "user x (uid 4242)", uid: os.Geteuid() + 4242}, true, "nothing"},
	} {
		var log bytes.Buffer
		s := &session{o: Options{Log: zerolog.New(&log), Strict: tc.strict}, self: ident.ReadSelf()}
		err := s.outsideHeld(&outsideLook{writers: []outsider{tc.w}, done: true}, file)
		var held *marker.HeldError
		got := "nothing"
		switch {
		case errors.As(err, &held) && held.Kind == marker.HeldOutside && held.Kind.Waitable() && held.Holder.Pid == 7:
			got = "refused"
		case err != nil:
			got = err.Error()
		case strings.Contains(log.String(), "cannot tell") || strings.Contains(log.String(), "may write"):
			got = "said"
		}
		if got != tc.want {
			t.Errorf("%s: %s (%s), want %s", tc.name, got, log.String(), tc.want)
		}
	}
}
