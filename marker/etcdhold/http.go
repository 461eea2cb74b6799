package etcdhold

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// A small HTTP/1.1 client, enough for etcd's JSON gateway: one POST per
// connection (Connection: close), a body of Content-Length, chunks or up to
// EOF. net/http would do it too, but it is not linked into padrun, and it
// would add 6 MB to the binary and its packages' initialisation to every
// start-up. TLS goes through padrun-etcd-tls for the same reason.

// maxBody bounds a unary answer: a range over padrun's prefix at most.
const maxBody = 8 << 20

// endpoint is one etcd member's client URL.
type endpoint struct {
	url  string // as given, for messages
	host string // host:port
	tls  bool
}

func parseEndpoint(s string) (endpoint, error) {
	e := endpoint{url: s}
	rest := s
	switch {
	case strings.HasPrefix(s, "https://"):
		e.tls, rest = true, strings.TrimPrefix(s, "https://")
	case strings.HasPrefix(s, "http://"):
		rest = strings.TrimPrefix(s, "http://")
	case strings.Contains(s, "://"):
		return e, fmt.Errorf("etcd: endpoint %q: only http:// and https:// are spoken", s)
	}
	rest = strings.TrimSuffix(rest, "/")
	if rest == "" || strings.Contains(rest, "/") {
		return e, fmt.Errorf("etcd: endpoint %q: want scheme://host:port", s)
	}
	if _, _, err := net.SplitHostPort(rest); err != nil {
		rest = net.JoinHostPort(rest, "2379")
	}
	e.host = rest
	return e, nil
}

// exchange is one request on its own connection. The caller reads the
// body and closes it; ctx's deadline bounds the whole exchange, reads of a
// streamed body included.
type exchange struct {
	conn   net.Conn
	status int
	body   io.Reader
	// detach stops the request's context from ending the exchange: a
	// watch outlives the bound of its request.
	detach func() bool
}

func (x *exchange) Close() error {
	x.detach()
	return x.conn.Close()
}

func (c *Client) post(ctx context.Context, e endpoint, path string, body []byte, headers ...string) (*exchange, error) {
	var conn net.Conn
	var err error
	if e.tls {
		conn, err = c.dialTLS(ctx, e)
	} else {
		d := net.Dialer{}
		conn, err = d.DialContext(ctx, "tcp", e.host)
	}
	if err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl) // Best effort: a failed set shows as a failed read.
	}
	// A context cancelled before its deadline (a signal) ends the exchange too.
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	x, err := c.roundTrip(conn, e, path, body, headers)
	if err != nil {
		stop()
		conn.Close()
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, err
	}
	x.detach = stop
	return x, nil
}

func (c *Client) roundTrip(conn net.Conn, e endpoint, path string, body []byte, headers []string) (*exchange, error) {
	var req strings.Builder
	fmt.Fprintf(&req, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n", path, e.host, len(body))
	if tok := c.token(); tok != "" {
		fmt.Fprintf(&req, "Authorization: %s\r\n", tok)
	}
	for _, h := range headers {
		req.WriteString(h + "\r\n")
	}
	req.WriteString("\r\n")
	if _, err := io.WriteString(conn, req.String()+string(body)); err != nil {
		return nil, err
	}
	br := bufio.NewReader(conn)
	line, err := readLine(br)
	if err != nil {
		if pc, ok := conn.(*pipeConn); ok {
			return nil, pc.why(err)
		}
		return nil, err
	}
	proto, code, ok := strings.Cut(line, " ")
	if !ok || !strings.HasPrefix(proto, "HTTP/1.") || len(code) < 3 {
		return nil, fmt.Errorf("not an HTTP answer: %q", cut(line))
	}
	status, err := strconv.Atoi(code[:3])
	if err != nil {
		return nil, fmt.Errorf("not an HTTP answer: %q", cut(line))
	}
	length, chunked := int64(-1), false
	for {
		h, err := readLine(br)
		if err != nil {
			return nil, err
		}
		if h == "" {
			break
		}
		k, v, _ := strings.Cut(h, ":")
		v = strings.TrimSpace(v)
		switch strings.ToLower(k) {
		case "content-length":
			if length, err = strconv.ParseInt(v, 10, 64); err != nil || length < 0 {
				return nil, fmt.Errorf("bad Content-Length %q", cut(v))
			}
		case "transfer-encoding":
			chunked = strings.EqualFold(v, "chunked")
		}
	}
	x := &exchange{conn: conn, status: status, body: br}
	switch {
	case chunked:
		x.body = &chunkReader{r: br}
	case length >= 0:
		x.body = io.LimitReader(br, length)
	}
	return x, nil
}

// readLine reads one header line, bounded.
func readLine(br *bufio.Reader) (string, error) {
	line, err := br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		return "", errors.New("header line too long")
	}
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return "", err
	}
	return strings.TrimRight(string(line), "\r\n"), nil
}

// chunkReader decodes a chunked body (RFC 9112 7.1), trailers ignored.
type chunkReader struct {
	r    *bufio.Reader
	left int64
	done bool
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if c.done {
		return 0, io.EOF
	}
	if c.left == 0 {
		line, err := readLine(c.r)
		if err != nil {
			return 0, err
		}
		size, _, _ := strings.Cut(line, ";")
		n, err := strconv.ParseInt(strings.TrimSpace(size), 16, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("bad chunk size %q", cut(line))
		}
		if n == 0 {
			c.done = true
			return 0, io.EOF
		}
		c.left = n
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	if c.left == 0 && err == nil {
		if _, err = readLine(c.r); err != nil { // the CRLF after the chunk
			return n, err
		}
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

// cut shortens what a broken peer said, for a message.
func cut(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
