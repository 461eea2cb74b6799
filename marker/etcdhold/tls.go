package etcdhold

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/padrun/padrun/marker/safefile"
)

// helperName is the program that carries https:// requests.
const helperName = "padrun-etcd-tls"

// tlsHelper finds padrun-etcd-tls beside padrun's own executable (as the
// kernel names it: /proc/self/exe), never in PATH, and only when it and its
// folder pass the owner rule (docs/spec.md §14): a helper another user
// could plant or replace would carry the client key's path and etcd's
// answers.
func tlsHelper() (string, error) {
	name := helperName
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("etcd: https:// endpoints need %s beside padrun, and padrun cannot name its own executable: %w", helperName, err)
	}
	if real, err := filepath.EvalSymlinks(self); err == nil {
		self = real
	}
	p := filepath.Join(filepath.Dir(self), name)
	if err := safefile.TrustedProgram(p); err != nil {
		return "", &helperError{Path: p, Err: err}
	}
	return p, nil
}

// helperError says padrun-etcd-tls is missing beside padrun, or is not to
// be trusted there.
type helperError struct {
	Path string
	Err  error
}

func (e *helperError) Error() string {
	return "etcd: https:// endpoints need " + helperName + " beside padrun: " + e.Err.Error()
}

func (e *helperError) Unwrap() error { return e.Err }

// Hint says how to install it.
func (e *helperError) Hint() string {
	return "install it beside padrun, owned by you or root and writable by no one else: go build -o " + e.Path + " github.com/padrun/padrun/cmd/" + helperName
}

// tlsRefusedError is a TLS rejection no retry changes: a certificate
// either side refused, or certificate files that cannot be read.
type tlsRefusedError struct{ msg string }

func (e *tlsRefusedError) Error() string { return "TLS: " + e.msg }

// dialTLS starts padrun-etcd-tls for one connection to e.
func (c *Client) dialTLS(ctx context.Context, e endpoint) (net.Conn, error) {
	args := []string{"-connect", e.host}
	if c.cfg.CACert != "" {
		args = append(args, "-cacert", c.cfg.CACert)
	}
	if c.cfg.Cert != "" {
		args = append(args, "-cert", c.cfg.Cert, "-key", c.cfg.Key)
	}
	if dl, ok := ctx.Deadline(); ok {
		args = append(args, "-timeout", time.Until(dl).String())
	}
	cmd := exec.Command(c.tls, args...)
	pc := &pipeConn{cmd: cmd, spawn: c.spawn(), done: make(chan struct{})}
	cmd.Stderr = &pc.stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := c.spawn().Start(cmd); err != nil {
		return nil, err
	}
	pc.w, pc.r = in, out
	return pc, nil
}

// pipeConn is a connection through padrun-etcd-tls's stdin and stdout.
// A deadline that passes kills it: pipes take no deadline everywhere.
type pipeConn struct {
	cmd    *exec.Cmd
	spawn  Spawner
	r      io.ReadCloser
	w      io.WriteCloser
	stderr bytes.Buffer
	mu     sync.Mutex
	timer  *time.Timer
	once   sync.Once
	done   chan struct{}
	state  error
}

func (p *pipeConn) Read(b []byte) (int, error)  { return p.r.Read(b) }
func (p *pipeConn) Write(b []byte) (int, error) { return p.w.Write(b) }

func (p *pipeConn) Close() error {
	p.mu.Lock()
	if p.timer != nil {
		p.timer.Stop()
	}
	p.mu.Unlock()
	p.wait(true)
	return nil
}

// wait ends the helper (killing it when kill is set) and reaps it once.
func (p *pipeConn) wait(kill bool) error {
	p.once.Do(func() {
		p.w.Close()
		if kill {
			p.cmd.Process.Kill() // Best effort: it may have exited.
		}
		p.state = p.spawn.Wait(p.cmd)
		close(p.done)
	})
	<-p.done
	return p.state
}

// why explains a read that found no answer, from the helper's exit.
func (p *pipeConn) why(readErr error) error {
	state := p.wait(false)
	msg := strings.TrimSpace(p.stderr.String())
	var ee *exec.ExitError
	switch {
	case errors.As(state, &ee) && ee.ExitCode() == 3:
		return &tlsRefusedError{msg}
	case msg != "":
		return errors.New(msg)
	}
	return readErr
}

func (p *pipeConn) SetDeadline(t time.Time) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	if !t.IsZero() {
		p.timer = time.AfterFunc(time.Until(t), func() { p.cmd.Process.Kill() }) // Best effort.
	}
	return nil
}

func (p *pipeConn) SetReadDeadline(t time.Time) error  { return p.SetDeadline(t) }
func (p *pipeConn) SetWriteDeadline(t time.Time) error { return p.SetDeadline(t) }
func (p *pipeConn) LocalAddr() net.Addr                { return pipeAddr{} }
func (p *pipeConn) RemoteAddr() net.Addr               { return pipeAddr{} }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return helperName }
