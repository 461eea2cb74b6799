package cgroup

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/padrun/padrun/marker/cgroupdir"
	"github.com/padrun/padrun/supervise/reap"
)

// Session is a cgroup v2 of the session's own: the child is born in it
// (clone3 with CLONE_INTO_CGROUP), so every process of the session, however
// it forks, setsids or loses its parent, stays in it; cgroup.events says
// whether any still lives and cgroup.kill ends them all.
type Session struct {
	Path string
	made bool // Make was called
	fd   int  // the folder, open for clone3 until the fork; -1 when not made
	gone bool // removed, or never made
}

// New names a cgroup for the session, Prefix+tag below padrun's own
// cgroup; Make makes it. It returns nil where there is no cgroup v2 or
// padrun may not write there (a user without a delegated subtree).
func New(tag string) *Session {
	parent := ownParent()
	if parent == "" {
		return nil
	}
	return &Session{Path: filepath.Join(parent, Prefix+tag), fd: -1}
}

// ownParent returns padrun's own cgroup v2 folder, where the sessions'
// cgroups are made, or "" where there is none padrun may write in.
func ownParent() string {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	own := ""
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			own = p
		}
	}
	if own == "" || strings.HasSuffix(own, " (deleted)") {
		return ""
	}
	for _, mnt := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
		if !cgroupdir.IsV2(mnt) {
			continue
		}
		parent := filepath.Join(mnt, own)
		if unix.Access(parent, unix.W_OK) != nil {
			return ""
		}
		return parent
	}
	return ""
}

// Make makes the cgroup. Call it once the marker that names it is
// published: a padrun killed in between leaves no cgroup that no marker
// names. Should making it fail, the child starts without it and Path names
// a folder that does not exist, which the orphan check reads as such. It
// costs a mkdir and an open on the start-up path, less than a goroutine of
// its own did (a thread, and waking the start for it).
func (s *Session) Make() {
	if s == nil || s.made {
		return
	}
	s.made = true
	if err := unix.Mkdir(s.Path, 0o755); err != nil {
		s.gone = true
		return
	}
	fd, err := unix.Open(s.Path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		unix.Rmdir(s.Path) // Best effort.
		s.gone = true
		return
	}
	s.fd = fd
}

// FD is the cgroup's folder, open for the fork into it (clone3's
// CLONE_INTO_CGROUP), or -1 when there is none to fork into.
func (s *Session) FD() int {
	if s == nil {
		return -1
	}
	return s.fd
}

// CloseFD closes the folder, which only the fork needed.
func (s *Session) CloseFD() {
	if s.fd >= 0 {
		unix.Close(s.fd)
		s.fd = -1
	}
}

// Remove removes the cgroup if nothing lives in it any more; it reports
// whether the cgroup is gone.
func (s *Session) Remove() bool {
	if s == nil || !s.made || s.gone {
		return true
	}
	s.CloseFD()
	// Padrun's own exited children (orphans of the session it reaps as
	// their subreaper) still count until reaped.
	s.gone = cgroupdir.RemoveWhenEmpty(s.Path, func() { reap.Orphans(0) })
	return s.gone
}

// RemoveEmpty removes the cgroup when nothing lives in it, with one rmdir,
// which the kernel refuses (EBUSY) while any process does; it reports
// whether the cgroup is gone.
func (s *Session) RemoveEmpty() bool {
	if s.gone {
		return true
	}
	if err := unix.Rmdir(s.Path); err != nil && err != unix.ENOENT {
		return false
	}
	s.gone = true
	return true
}

// Populated reports whether any process lives in the cgroup or below it.
// An unreadable cgroup.events counts as populated: fail closed.
func (s *Session) Populated() bool {
	fd, err := unix.Open(filepath.Join(s.Path, "cgroup.events"), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err != unix.ENOENT
	}
	defer unix.Close(fd)
	var b [256]byte
	n, err := unix.Read(fd, b[:])
	if err != nil || n <= 0 {
		return true
	}
	return !bytes.Contains(b[:n], []byte("populated 0"))
}

// Procs lists the processes in the cgroup and below it, as far as they can
// be read.
func (s *Session) Procs() []int {
	pids, _ := cgroupdir.Procs(s.Path) // Best effort: what could be read.
	return pids
}

// Kill sends SIGKILL to every process of the cgroup at once.
func (s *Session) Kill() error {
	return os.WriteFile(filepath.Join(s.Path, "cgroup.kill"), []byte("1"), 0)
}

// Left is a session cgroup found beside padrun's own sessions': its name
// tells the padrun that made it.
type Left struct {
	Path string
	// Tag is what follows Prefix in its name: New's tag.
	Tag  string
	Made time.Time // the folder's change time
}

// ListLeft lists the session cgroups made below padrun's own cgroup, where
// New makes them: those of padruns that run, and those that padruns killed
// by SIGKILL could not remove.
func ListLeft() ([]Left, error) {
	parent := ownParent()
	if parent == "" {
		return nil, nil
	}
	ents, err := os.ReadDir(parent)
	if err != nil {
		return nil, err
	}
	var out []Left
	for _, e := range ents {
		tag, ok := strings.CutPrefix(e.Name(), Prefix)
		if !ok || !e.IsDir() {
			continue
		}
		var st unix.Stat_t
		p := filepath.Join(parent, e.Name())
		if unix.Lstat(p, &st) != nil {
			continue // gone meanwhile
		}
		out = append(out, Left{Path: p, Tag: tag, Made: time.Unix(st.Ctim.Unix())})
	}
	return out, nil
}

// RemoveLeft removes an empty session cgroup with one rmdir, which the
// kernel refuses while any process lives in it: then gone is false and
// procs lists those processes.
func RemoveLeft(path string) (gone bool, procs []int, err error) {
	switch err := unix.Rmdir(path); err {
	case nil, unix.ENOENT:
		return true, nil, nil
	case unix.EBUSY:
		procs, _ := cgroupdir.Procs(path) // Best effort: what could be read.
		return false, procs, nil
	default:
		return false, nil, err
	}
}

// Stalled is how long, in all, some process of the session was runnable
// but waited for a CPU, or waited for I/O (the "some" totals of its
// cpu.pressure and io.pressure, PSI), since the cgroup was made; 0 where
// they cannot be read (no PSI, nil).
func (s *Session) Stalled() time.Duration {
	if s == nil {
		return 0
	}
	return pressure(filepath.Join(s.Path, "cpu.pressure")) + pressure(filepath.Join(s.Path, "io.pressure"))
}

// pressure is the "some" total of a PSI file, "some avg10=0.00 avg60=0.00
// avg300=0.00 total=USEC", or 0.
func pressure(file string) time.Duration {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	if !bytes.HasPrefix(line, []byte("some ")) {
		return 0
	}
	_, total, ok := bytes.Cut(line, []byte(" total="))
	if !ok {
		return 0
	}
	us, err := strconv.ParseInt(string(bytes.TrimSpace(total)), 10, 64)
	if err != nil || us < 0 {
		return 0
	}
	return time.Duration(us) * time.Microsecond
}
