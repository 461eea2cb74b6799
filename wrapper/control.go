package wrapper

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/padrun/padrun/marker"
	"github.com/padrun/padrun/wrapper/control"
)

// The control socket's server: the protocol and its client are package
// control's.

// controlServer is a running control socket.
type controlServer struct {
	path  string
	ln    net.Listener
	mu    sync.Mutex
	conns map[net.Conn]bool
	wg    sync.WaitGroup
	done  chan struct{} // closed by stop, before it waits for the handlers
	once  sync.Once
}

// startControl creates the control socket in dir and serves it until stop
// is called. Requests are handled by handle.
func startControl(dir string, pid int, handle func(control.Request) control.Reply) (*controlServer, error) {
	path := control.Path(dir, pid)
	if len(path) > control.MaxPath {
		return nil, fmt.Errorf("wrapper: control socket %s: the path is longer than %d bytes", path, control.MaxPath)
	}
	// A socket left by a SIGKILLed padrun of the same pid: the folder is
	// the user's own, so whatever is there is ours to replace.
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("wrapper: control socket %s: %w", path, err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("wrapper: control socket %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		os.Remove(path) // Best effort.
		return nil, fmt.Errorf("wrapper: control socket %s: %w", path, err)
	}
	c := &controlServer{path: path, ln: ln, conns: map[net.Conn]bool{}, done: make(chan struct{})}
	c.wg.Add(1)
	go c.serve(handle)
	return c, nil
}

func (c *controlServer) serve(handle func(control.Request) control.Reply) {
	defer c.wg.Done()
	for {
		conn, err := c.ln.Accept()
		if err != nil {
			return // closed by stop
		}
		c.mu.Lock()
		if c.conns == nil {
			c.mu.Unlock()
			conn.Close()
			return
		}
		c.conns[conn] = true
		c.wg.Add(1)
		c.mu.Unlock()
		go func() {
			defer c.wg.Done()
			c.talk(conn, handle)
			c.mu.Lock()
			delete(c.conns, conn)
			c.mu.Unlock()
			conn.Close()
		}()
	}
}

// talk answers one connection's requests, a line each, after checking that
// the peer runs as padrun's own uid.
func (c *controlServer) talk(conn net.Conn, handle func(control.Request) control.Reply) {
	enc := json.NewEncoder(conn)
	if err := checkPeer(conn); err != nil {
		enc.Encode(control.Reply{Result: "error", Error: err.Error()}) // Best effort.
		return
	}
	sc := bufio.NewScanner(conn)
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for sc.Scan() {
		var req control.Request
		reply := control.Reply{Result: "error", Error: "not a JSON request"}
		if json.Unmarshal(sc.Bytes(), &req) == nil {
			reply = handle(req)
		}
		if err := enc.Encode(reply); err != nil {
			return
		}
	}
}

// stop closes the socket and every connection, waits for their handlers,
// and removes the socket file.
func (c *controlServer) stop() {
	c.once.Do(func() { close(c.done) }) // stop may be called again
	c.ln.Close()
	c.mu.Lock()
	for conn := range c.conns {
		conn.Close()
	}
	c.conns = nil
	c.mu.Unlock()
	c.wg.Wait()
	os.Remove(c.path) // Best effort: Close already unlinks it on most systems.
}

// handleControl answers a companion's request for this session.
func (s *session) handleControl(req control.Request) control.Reply {
	s.greet.hello() // any request is the companion's greeting, before it is answered
	switch req.Op {
	case "hello":
		return control.Reply{Result: "ok", Pid: s.self.Pid}
	case "claim", "release":
	default:
		return control.Reply{Result: "error", Error: fmt.Sprintf("unknown op %q", req.Op)}
	}
	if req.File == "" || !filepath.IsAbs(req.File) {
		return control.Reply{Result: "error", Error: "the file must be an absolute path"}
	}
	if req.Op == "claim" {
		if err := sessionFolders(req.File); err != nil {
			return control.Reply{Result: "error", Error: err.Error()}
		}
	}
	file, err := CanonicalFile(req.File)
	if err != nil {
		return control.Reply{Result: "error", Error: err.Error()}
	}
	if req.Op == "claim" && req.Wait && s.o.Wait > 0 {
		s.waitFree(file)
	}
	s.mu.Lock()
	defer s.unlock()
	if req.Op == "release" {
		if err := s.drop(file); err != nil {
			return control.Reply{Result: "error", Error: err.Error()}
		}
		s.o.Log.Info().Str("file", file).Msg("companion released session file")
		return control.Reply{Result: "released"}
	}
	err = s.take(file, req.SessionID)
	if held := (*marker.HeldError)(nil); errors.As(err, &held) && req.Wait && s.o.Wait > 0 && held.Kind.Waitable() {
		err = &WaitedError{HeldError: held, Waited: s.o.Wait}
	}
	if err != nil && req.Stop {
		s.stopHarness(err)
	}
	var held *marker.HeldError
	switch {
	case errors.As(err, &held):
		lines := []string{err.Error()}
		if s.o.Refusal != nil {
			lines = s.o.Refusal(err)
		}
		for i := range lines {
			lines[i] = "padrun: " + lines[i]
		}
		var toast []string
		if s.o.Toast != nil {
			toast = s.o.Toast(err)
		}
		s.o.Log.Info().Str("file", file).Msg("companion claim refused")
		return control.Reply{Result: "refused", Lines: lines, Verdict: held.Judgement.String(), Toast: toast}
	case err != nil:
		return control.Reply{Result: "error", Error: err.Error()}
	}
	s.o.Log.Info().Str("file", file).Msg("companion claimed session file")
	if req.Switch {
		if s.current != "" && s.current != file && !slices.Contains(s.guards, s.current) {
			if err := s.drop(s.current); err != nil {
				s.o.Log.Warn().Err(err).Str("file", s.current).Msg("release the session file the harness left")
			}
		}
		s.current = file
		s.pickedLocked(file)
	}
	return control.Reply{Result: "claimed"}
}

// stopHarness ends the child at once, before it writes to a file padrun
// could not claim, and keeps why for padrun's exit.
func (s *session) stopHarness(why error) { s.stopChild(why) }

// waitFree waits, up to --wait, until file could be taken: a companion's
// claim that asked to wait, as the run's own acquire waits, saying once
// who holds it. It holds nothing meanwhile; the claim follows it.
func (s *session) waitFree(file string) {
	deadline := time.Now().Add(s.o.Wait)
	said := false
	for time.Now().Before(deadline) {
		st := marker.Inspect(file, s.self, time.Now())
		if st.Free() || st.Holder != nil && st.Holder.Pid == s.self.Pid {
			return
		}
		if !said && s.o.OnWait != nil {
			s.o.OnWait(&marker.HeldError{File: file, Holder: st.Holder, Kind: marker.HeldPolled})
		}
		said = true
		select {
		case <-time.After(pollEvery):
		case <-s.ctlDone:
			return // the run ends: the claim is refused
		}
	}
}
