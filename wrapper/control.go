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
	"strconv"
	"sync"
	"time"

	"github.com/padrun/padrun/marker"
)

// The control socket is how a companion inside the harness asks its own
// padrun to guard the session file the harness is about to use (SPEC 4.5).
// The protocol is one JSON object a line each way:
//
//	{"op":"claim","file":"/abs/F","sessionId":"…"}  -> {"result":"claimed"}
//	                                                 | {"result":"refused","lines":[…],"verdict":"…"}
//	                                                 | {"result":"error","error":"…"}
//	{"op":"release","file":"/abs/F"}                 -> {"result":"released"} | {"result":"error",…}
//	{"op":"hello"}                                   -> {"result":"ok","pid":1234}
//
// The socket is <dir>/<padrun pid>.sock, mode 0600, in a 0700 folder only the
// user can change; it accepts only padrun's own uid and goes at every exit.

// controlRequest is one line a companion sends.
type controlRequest struct {
	Op        string `json:"op"`
	File      string `json:"file,omitempty"`
	SessionID string `json:"sessionId,omitempty"`
	// Stop: the harness cannot cancel what it is doing, so a claim that is
	// not granted ends the session at once (SIGKILL, before it writes) and
	// padrun exits with the refusal.
	Stop bool `json:"stop,omitempty"`
	// Switch: the file replaces the harness's current session file, which
	// is released once the claim is granted (claude's /clear, /resume).
	Switch bool `json:"switch,omitempty"`
	// Wait: the harness waits for the answer, so a held file is waited
	// for up to --wait, as padrun waits for the files it names itself
	// (opencode's turn, which waits before it stores anything).
	Wait bool `json:"wait,omitempty"`
}

// controlReply is padrun's answer to one request.
type controlReply struct {
	Result  string   `json:"result"`
	Lines   []string `json:"lines,omitempty"`   // the refusal for people, each with "padrun: "
	Verdict string   `json:"verdict,omitempty"` // the holder's verdict, when refused
	Error   string   `json:"error,omitempty"`
	Pid     int      `json:"pid,omitempty"`
}

// controlPath names the control socket of the padrun with pid in dir.
func controlPath(dir string, pid int) string {
	return filepath.Join(dir, strconv.Itoa(pid)+".sock")
}

// maxSocketPath is the longest socket path every platform binds (darwin's
// sun_path holds 104 bytes with its terminating NUL).
const maxSocketPath = 103

// control is a running control socket.
type control struct {
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
func startControl(dir string, pid int, handle func(controlRequest) controlReply) (*control, error) {
	path := controlPath(dir, pid)
	if len(path) > maxSocketPath {
		return nil, fmt.Errorf("wrapper: control socket %s: the path is longer than %d bytes", path, maxSocketPath)
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
	c := &control{path: path, ln: ln, conns: map[net.Conn]bool{}, done: make(chan struct{})}
	c.wg.Add(1)
	go c.serve(handle)
	return c, nil
}

func (c *control) serve(handle func(controlRequest) controlReply) {
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
func (c *control) talk(conn net.Conn, handle func(controlRequest) controlReply) {
	enc := json.NewEncoder(conn)
	if err := checkPeer(conn); err != nil {
		enc.Encode(controlReply{Result: "error", Error: err.Error()}) // Best effort.
		return
	}
	sc := bufio.NewScanner(conn)
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for sc.Scan() {
		var req controlRequest
		reply := controlReply{Result: "error", Error: "not a JSON request"}
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
func (c *control) stop() {
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
func (s *session) handleControl(req controlRequest) controlReply {
	s.hello() // any request is the companion's greeting, before it is answered
	switch req.Op {
	case "hello":
		return controlReply{Result: "ok", Pid: s.self.Pid}
	case "claim", "release":
	default:
		return controlReply{Result: "error", Error: fmt.Sprintf("unknown op %q", req.Op)}
	}
	if req.File == "" || !filepath.IsAbs(req.File) {
		return controlReply{Result: "error", Error: "the file must be an absolute path"}
	}
	if req.Op == "claim" {
		if err := sessionFolders(req.File); err != nil {
			return controlReply{Result: "error", Error: err.Error()}
		}
	}
	file, err := CanonicalFile(req.File)
	if err != nil {
		return controlReply{Result: "error", Error: err.Error()}
	}
	if req.Op == "claim" && req.Wait && s.o.Wait > 0 {
		s.waitFree(file)
	}
	s.mu.Lock()
	defer s.unlock()
	if req.Op == "release" {
		if err := s.drop(file); err != nil {
			return controlReply{Result: "error", Error: err.Error()}
		}
		s.o.Log.Info().Str("file", file).Msg("companion released session file")
		return controlReply{Result: "released"}
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
		s.o.Log.Info().Str("file", file).Msg("companion claim refused")
		return controlReply{Result: "refused", Lines: lines, Verdict: held.Judgement.String()}
	case err != nil:
		return controlReply{Result: "error", Error: err.Error()}
	}
	s.o.Log.Info().Str("file", file).Msg("companion claimed session file")
	if req.Switch {
		if s.current != "" && s.current != file && !slices.Contains(s.guards, s.current) {
			if err := s.drop(s.current); err != nil {
				s.o.Log.Warn().Err(err).Str("file", s.current).Msg("release the session file the harness left")
			}
		}
		s.current = file
	}
	return controlReply{Result: "claimed"}
}

// stopHarness ends the child at once, before it writes to a file padrun
// could not claim, and keeps why for padrun's exit. The caller holds s.mu.
func (s *session) stopHarness(why error) {
	if s.stopped == nil {
		s.stopped = why
	}
	if s.kill != nil {
		s.kill()
	}
}

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
