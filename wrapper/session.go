package wrapper

import (
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/padrun/padrun/marker"
	"github.com/padrun/padrun/marker/ident"
	"github.com/padrun/padrun/registry"
)

// pause waits for d, the deadline, or a signal, which aborts the run.
func pause(sigs <-chan os.Signal, deadline time.Time, d time.Duration) error {
	if left := time.Until(deadline); left < d {
		d = left
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case sig := <-sigs:
		return &AbortError{sig.(syscall.Signal)}
	}
}

// release drops every lock taken, removing our markers.
func (s *session) release() {
	for i := len(s.locks) - 1; i >= 0; i-- {
		if err := s.locks[i].Release(); err != nil {
			s.o.Log.Warn().Err(err).Msg("release")
		}
	}
	s.locks = nil
}

// cleanup undoes the run: markers and locks, then the registry record. It
// runs on every return of Run, panics included.
func (s *session) cleanup() {
	s.release()
	if s.rec != nil {
		if err := s.reg.Remove(s.rec.SessionPID, string(s.rec.ProcStart)); err != nil {
			s.o.Log.Warn().Err(err).Msg("remove record")
		}
		s.rec = nil
	}
}

// recordChild adds the child to the markers and the record. It may overlap
// the child's run: no rival judges a marker while its lock is held.
func (s *session) recordChild(pid int) {
	token, err := ident.StartToken(pid)
	if err != nil {
		s.o.Log.Debug().Err(err).Int("child_pid", pid).Msg("child start token")
	}
	for _, l := range s.locks {
		if err := l.SetChild(pid, token); err != nil {
			s.o.Log.Warn().Err(err).Msg("record child in marker")
		}
	}
	s.rec.Padrun.ChildPid, s.rec.Padrun.ChildProcStart = pid, ident.Token(token)
	if err := s.reg.Write(s.rec); err != nil {
		s.o.Log.Warn().Err(err).Msg("record child in registry")
	}
}

// heartbeat refreshes every marker's mtime each interval until stop is called.
func (s *session) heartbeat(every time.Duration) (stop func()) {
	if every <= 0 || len(s.locks) == 0 {
		return func() {}
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case now := <-t.C:
				for _, l := range s.locks {
					if err := l.Touch(now); err != nil {
						s.o.Log.Warn().Err(err).Msg("heartbeat")
					}
				}
			}
		}
	}()
	return func() {
		close(quit)
		<-done
	}
}

func heartbeatSeconds(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return int((d + time.Second - 1) / time.Second)
}

func openRegistry() (*registry.Registry, error) {
	dir, err := registry.Dir()
	if err != nil {
		return nil, err
	}
	return registry.Open(dir)
}

func markers(files []string) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = marker.MarkerPath(f)
	}
	return out
}

// childEnv is the environment unchanged, plus the session's variables. An
// inherited file and marker from an outer padrun go when this run guards
// nothing.
func childEnv(env []string, pid int, agent string, files []string) []string {
	out := make([]string, 0, len(env)+5)
	hasAgent := false
	for _, kv := range env {
		switch key(kv) {
		case "PAD_SESSION_PID", "PADRUN_VERSION", "PADRUN_SESSION_FILE", "PADRUN_MARKER":
			continue
		case "PAD_AGENT":
			hasAgent = true
		}
		out = append(out, kv)
	}
	out = append(out, fmt.Sprintf("PAD_SESSION_PID=%d", pid), "PADRUN_VERSION="+Version)
	if agent != "" && !hasAgent {
		out = append(out, "PAD_AGENT="+agent)
	}
	if len(files) > 0 {
		out = append(out, "PADRUN_SESSION_FILE="+files[0], "PADRUN_MARKER="+marker.MarkerPath(files[0]))
	}
	return out
}

func key(kv string) string {
	for i := 0; i < len(kv); i++ {
		if kv[i] == '=' {
			return kv[:i]
		}
	}
	return kv
}
