// Package etcdhold takes a session's hold in etcd, for machines that share
// no filesystem lock: a key created only if absent, under a lease that the
// holder keeps alive. It speaks etcd's v3 API as JSON over HTTP (the
// gateway every etcd serves at /v3/...), trying each endpoint in turn.
package etcdhold

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Config says how to reach etcd, with etcdctl's names for its parts.
type Config struct {
	Endpoints []string // client URLs, as etcdctl --endpoints
	CACert    string   // --cacert: the CA bundle that verifies the members
	Cert, Key string   // --cert, --key: this client's certificate
	User      string   // --user NAME:PASSWORD
	Prefix    string   // every key padrun writes starts with it
	TTL       time.Duration
	// Attempt bounds one request to one member: past it, the next member
	// is asked. A stopped member accepts connections and never answers.
	Attempt time.Duration
	// Patience bounds the rounds over every member while one of them may
	// yet answer: an election (a leader killed) takes a second or two.
	Patience time.Duration
	// Spawn starts and waits for the TLS helper; nil is os/exec's own. A
	// run passes the supervisor's (supervise/reap), which reaps the
	// session's orphans and leaves the helper's exit to its Wait.
	Spawn Spawner
}

// Spawner starts a child and waits for it, as exec.Cmd's Start and Wait.
type Spawner interface {
	Start(*exec.Cmd) error
	Wait(*exec.Cmd) error
}

// execSpawner is os/exec's own Start and Wait.
type execSpawner struct{}

func (execSpawner) Start(cmd *exec.Cmd) error { return cmd.Start() }
func (execSpawner) Wait(cmd *exec.Cmd) error  { return cmd.Wait() }

// spawn is the configured Spawner, or os/exec's own.
func (c *Client) spawn() Spawner {
	if c.cfg.Spawn != nil {
		return c.cfg.Spawn
	}
	return execSpawner{}
}

// DefaultPrefix and DefaultTTL are the --etcd-prefix and --etcd-ttl defaults.
const (
	DefaultPrefix = "/padrun/"
	DefaultTTL    = 15 * time.Second
)

// Client is a connection-less etcd client: every request dials afresh.
type Client struct {
	cfg  Config
	eps  []endpoint
	tls  string // padrun-etcd-tls, for https:// endpoints
	mu   sync.Mutex
	tok  string
	next int // the member that answered last: asked first
}

// New checks cfg and reads its certificates; it does not reach etcd.
func New(cfg Config) (*Client, error) {
	if len(cfg.Endpoints) == 0 {
		return nil, errors.New("etcd: no endpoint given")
	}
	cfg.Prefix = normalPrefix(cfg.Prefix)
	if cfg.TTL == 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.TTL < 2*time.Second {
		return nil, fmt.Errorf("etcd: a TTL of %s leaves no time to stop the session: at least 2s", cfg.TTL)
	}
	if cfg.Attempt == 0 {
		cfg.Attempt = min(2*time.Second, cfg.TTL/6)
	}
	if cfg.Patience == 0 {
		cfg.Patience = 5 * time.Second
	}
	c := &Client{cfg: cfg}
	for _, s := range cfg.Endpoints {
		e, err := parseEndpoint(strings.TrimSpace(s))
		if err != nil {
			return nil, err
		}
		c.eps = append(c.eps, e)
	}
	if (cfg.Cert == "") != (cfg.Key == "") {
		return nil, errors.New("etcd: --etcd-cert and --etcd-key go together")
	}
	for _, e := range c.eps {
		if e.tls && c.tls == "" {
			h, err := tlsHelper()
			if err != nil {
				return nil, err
			}
			c.tls = h
		}
	}
	if cfg.User != "" && !strings.Contains(cfg.User, ":") {
		return nil, errors.New("etcd: --etcd-user wants NAME:PASSWORD")
	}
	return c, nil
}

// TTL is the lease's time to live.
func (c *Client) TTL() time.Duration { return c.cfg.TTL }

// normalPrefix is prefix with one trailing slash (DefaultPrefix when
// empty): machines whose --etcd-prefix differs only by it share their keys.
func normalPrefix(prefix string) string {
	if prefix == "" {
		return DefaultPrefix
	}
	return strings.TrimRight(prefix, "/") + "/"
}

// Key is the etcd key of a session key.
func (c *Client) Key(session string) string { return c.cfg.Prefix + session }

// Prefix is the folder of every key padrun writes.
func (c *Client) Prefix() string { return c.cfg.Prefix }

func (c *Client) token() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tok
}

// unreachableError says no member gave an answer that could be judged:
// what each one did.
type unreachableError struct {
	Op       string
	Attempts []attempt
}

// attempt is one member's failure.
type attempt struct {
	Endpoint string
	Err      error
}

func (e *unreachableError) Error() string {
	parts := make([]string, 0, len(e.Attempts))
	for _, a := range e.Attempts {
		parts = append(parts, a.Endpoint+": "+a.Err.Error())
	}
	return "etcd: " + e.Op + ": no member answered (" + strings.Join(parts, "; ") + ")"
}

// Hint says what to run.
func (e *unreachableError) Hint() string {
	eps := make([]string, 0, len(e.Attempts))
	for _, a := range e.Attempts {
		eps = append(eps, a.Endpoint)
	}
	return "padrun never runs unguarded; check the cluster with: etcdctl --endpoints " + strings.Join(eps, ",") + " endpoint health"
}

// serverError is an error the gateway returned.
type serverError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Err     string `json:"error"`
}

func (e *serverError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = e.Err
	}
	return fmt.Sprintf("%s (code %d)", msg, e.Code)
}

// gRPC codes that another member, or a later try, may answer.
const (
	codeDeadline        = 4
	codeUnavailable     = 14
	codeUnauthenticated = 16
)

// call sends req to path and decodes the answer into resp, asking each
// member in turn until one answers. An answer that cannot be read is an
// error of that member, never a guess.
func (c *Client) call(ctx context.Context, op, path string, req, resp any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("etcd: %s: %w", op, err)
	}
	return c.each(ctx, op, func(ctx context.Context, e endpoint) error {
		x, err := c.post(ctx, e, path, body)
		if err != nil {
			return err
		}
		defer x.Close()
		b, err := io.ReadAll(io.LimitReader(x.body, maxBody+1))
		if err != nil {
			return err
		}
		if len(b) > maxBody {
			return errors.New("answer too large")
		}
		if x.status != 200 {
			return statusError(x.status, b)
		}
		if err := json.Unmarshal(b, resp); err != nil {
			return fmt.Errorf("unreadable answer: %w", err)
		}
		return nil
	})
}

// statusError reads the gateway's error body.
func statusError(status int, b []byte) error {
	var se serverError
	if json.Unmarshal(b, &se) == nil && (se.Message != "" || se.Err != "") {
		return &se
	}
	return fmt.Errorf("HTTP %d: %s", status, cut(string(bytes.TrimSpace(b))))
}

// fatal reports whether err is an answer that no other member would
// change: a refused request, not a member that could not give one.
func fatal(err error) bool {
	var se *serverError
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code {
	case codeDeadline, codeUnavailable, codeUnauthenticated:
		return false
	}
	return !strings.Contains(se.Message, "leader") // "no leader", "leader changed": another member may know
}

// each runs try on the members, the last good one first, each bounded by
// the per-member attempt time, until one succeeds. While a member may yet
// answer (it timed out, or knows no leader: an election), it goes round
// again, for Patience at most; members that all refuse connections end it
// at once.
func (c *Client) each(ctx context.Context, op string, try func(context.Context, endpoint) error) error {
	deadline := time.Now().Add(c.cfg.Patience)
	for {
		ue, err := c.round(ctx, op, try)
		if ue == nil || !ue.hopeful() || time.Now().After(deadline) {
			return err
		}
		t := time.NewTimer(100 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return context.Cause(ctx)
		case <-t.C:
		}
	}
}

// hopeful reports whether a member failed in a way a later try may not:
// anything but a refused connection.
func (e *unreachableError) hopeful() bool {
	for _, a := range e.Attempts {
		if !errors.Is(a.Err, syscall.ECONNREFUSED) && !refused(a.Err) {
			return true
		}
	}
	return false
}

// refused reports whether err is a member's refusal of this client that
// no retry changes: a certificate either side rejects, a wrong password.
func refused(err error) bool {
	var (
		auth *authError
		tr   *tlsRefusedError
	)
	return errors.As(err, &auth) || errors.As(err, &tr)
}

// authError is etcd's refusal of --etcd-user.
type authError struct {
	name string
	err  error
}

func (e *authError) Error() string { return "authenticate as " + e.name + ": " + e.err.Error() }
func (e *authError) Unwrap() error { return e.err }

// round asks each member once; ue is nil when the error (or nil) is final.
func (c *Client) round(ctx context.Context, op string, try func(context.Context, endpoint) error) (ue *unreachableError, err error) {
	c.mu.Lock()
	first := c.next
	c.mu.Unlock()
	ue = &unreachableError{Op: op}
	reauthed := false
	for i := 0; i < len(c.eps); i++ {
		e := c.eps[(first+i)%len(c.eps)]
		if err := c.authenticate(ctx, e); err != nil {
			ue.Attempts = append(ue.Attempts, attempt{e.url, err})
			continue
		}
		actx, cancel := context.WithTimeout(ctx, c.cfg.Attempt)
		err := try(actx, e)
		cancel()
		if err == nil {
			c.mu.Lock()
			c.next = (first + i) % len(c.eps)
			c.mu.Unlock()
			return nil, nil
		}
		if cause := context.Cause(ctx); cause != nil {
			return nil, cause
		}
		var se *serverError
		if errors.As(err, &se) && se.Code == codeUnauthenticated && c.cfg.User != "" && !reauthed {
			reauthed = true
			c.mu.Lock()
			c.tok = ""
			c.mu.Unlock()
			i-- // the same member, with a fresh token
			continue
		}
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("no answer within %s", c.cfg.Attempt)
		}
		if fatal(err) {
			return nil, fmt.Errorf("etcd: %s: %s: %w", op, e.url, err)
		}
		ue.Attempts = append(ue.Attempts, attempt{e.url, err})
	}
	return ue, ue
}

// authenticate gets a token for --etcd-user once.
func (c *Client) authenticate(ctx context.Context, e endpoint) error {
	if c.cfg.User == "" || c.token() != "" {
		return nil
	}
	name, pass, _ := strings.Cut(c.cfg.User, ":")
	body, _ := json.Marshal(map[string]string{"name": name, "password": pass})
	actx, cancel := context.WithTimeout(ctx, c.cfg.Attempt)
	defer cancel()
	x, err := c.post(actx, e, "/v3/auth/authenticate", body)
	if err != nil {
		return err
	}
	defer x.Close()
	b, err := io.ReadAll(io.LimitReader(x.body, 64<<10))
	if err != nil {
		return err
	}
	if x.status != 200 {
		return &authError{name, statusError(x.status, b)}
	}
	var r struct{ Token string }
	if err := json.Unmarshal(b, &r); err != nil || r.Token == "" {
		return fmt.Errorf("authenticate as %s: no token in the answer", name)
	}
	c.mu.Lock()
	c.tok = r.Token
	c.mu.Unlock()
	return nil
}
