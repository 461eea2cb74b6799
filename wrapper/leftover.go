package wrapper

import (
	"fmt"
	"strings"

	"github.com/padrun/padrun/marker/ident"
	"github.com/padrun/padrun/supervise"
)

// childInfo is what the markers record of the child: its pid and start
// token, and the process group and session it leads (0: none of its own).
type childInfo struct {
	pid       int
	token     string
	pgid, sid int
	inCgroup  bool // the child was born in the session's cgroup
}

// lockFds lists the descriptors of the session's locks, for the child to
// inherit: while any process holding one lives, the kernel keeps its file
// locked, even after padrun is killed. The follower may be taking a lock
// at the same time: s.mu keeps the list whole.
func (s *session) lockFds() []uintptr {
	s.mu.Lock()
	defer s.mu.Unlock()
	var fds []uintptr
	for _, l := range s.locks {
		if fd, ok := l.Fd(); ok {
			fds = append(fds, fd)
		}
		fds = append(fds, l.InodeFds()...) // the session file's own inode, under any name
	}
	return fds
}

// endRest applies the policy for what the child left of its session when
// it exited: every process still there gets TERM, then KILL after --grace,
// and people are told which (in a warning, unless padrun ended the child
// itself and says why). Processes that outlive even that keep the
// session file held: the markers stay (release keeps them) and the next run
// refuses, naming them, until they are gone.
func (s *session) endRest(child *supervise.Child, timedOut bool) {
	left := child.EndRest(s.o.Grace, func(pids []int) {
		msg := "the child left " + ident.Names(pids, 5) + " running: ending it (TERM, then KILL after the grace period)"
		if timedOut || s.stoppedWhy() != nil {
			// padrun ended the child (a refusal inside it, --timeout, a
			// lost hold), and says why: the rest of its tree goes with it.
			s.o.Log.Info().Ints("pids", pids).Msg(msg)
			return
		}
		s.o.Log.Warn().Ints("pids", pids).Msg(msg)
	})
	if len(left) == 0 {
		return
	}
	s.mu.Lock()
	s.left = left
	files := s.files()
	s.mu.Unlock()
	fmt.Fprintf(s.o.Stderr, "padrun: %s of the session outlived SIGKILL: its session files stay held until it is gone\n", ident.Names(left, 5))
	if len(files) > 0 {
		fmt.Fprintf(s.o.Stderr, "padrun: hint: see who holds them with: padrun status %s\n", strings.Join(files, " "))
	}
}
