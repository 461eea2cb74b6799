package etcdhold

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

func TestParseEndpoint(t *testing.T) {
	for _, c := range []struct {
		in, host string
		tls, bad bool
	}{
		{"http://127.0.0.1:2379", "127.0.0.1:2379", false, false},
		{"https://etcd1:2379/", "etcd1:2379", true, false},
		{"etcd1", "etcd1:2379", false, false},
		{"unix://sock", "", false, true},
		{"http://h:1/v3", "", false, true},
	} {
		e, err := parseEndpoint(c.in)
		if (err != nil) != c.bad || (!c.bad && (e.host != c.host || e.tls != c.tls)) {
			t.Errorf("parseEndpoint(%q) = %+v, %v", c.in, e, err)
		}
	}
}

func TestChunkReader(t *testing.T) {
	body := "5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\n\r\n"
	b, err := io.ReadAll(&chunkReader{r: bufio.NewReader(strings.NewReader(body))})
	if err != nil || string(b) != "hello, world" {
		t.Fatalf("got %q, %v", b, err)
	}
	_, err = io.ReadAll(&chunkReader{r: bufio.NewReader(strings.NewReader("5\r\nhel"))})
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("a cut chunk: %v", err)
	}
}

func TestI64_StringOrNumber(t *testing.T) {
	var v struct{ A, B, C i64 }
	if err := json.Unmarshal([]byte(`{"A":"7587899277533487109","B":15}`), &v); err != nil || v.A != 7587899277533487109 || v.B != 15 || v.C != 0 {
		t.Fatalf("%+v %v", v, err)
	}
	if err := json.Unmarshal([]byte(`{"A":"x"}`), &v); err == nil {
		t.Fatal("a non-number was read as one")
	}
}

// serve answers every connection on l with answer, after reading the request.
func serve(t *testing.T, answer string) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					line, err := br.ReadString('\n')
					if err != nil || line == "\r\n" {
						break
					}
				}
				io.WriteString(c, answer)
			}()
		}
	}()
	return "http://" + l.Addr().String()
}

// TestCall_UnreadableAnswer_IsNoGuess: a member whose answer cannot be read
// is a failure of that member: the next one is asked, and with none left
// the error names each.
func TestCall_UnreadableAnswer_IsNoGuess(t *testing.T) {
	bad := serve(t, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n{nope")
	good := serve(t, "HTTP/1.1 200 OK\r\nContent-Length: 27\r\n\r\n{\"header\":{\"revision\":\"9\"}}")
	c, err := New(Config{Endpoints: []string{bad, good}, Patience: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var r rangeResponse
	if err := c.call(context.Background(), "read", "/v3/kv/range", request{}, &r); err != nil || r.Header.Revision != 9 {
		t.Fatalf("the good member was not asked: %v %+v", err, r)
	}
	c, _ = New(Config{Endpoints: []string{bad}, Patience: time.Millisecond})
	var ue *unreachableError
	if err := c.call(context.Background(), "read", "/v3/kv/range", request{}, &r); !errors.As(err, &ue) || !strings.Contains(err.Error(), bad+": unreadable answer") {
		t.Fatalf("want an error naming the member, got %v", err)
	}
}

// TestCall_StoppedMember_LeftAfterTheAttempt: a member that accepts and
// never answers is left after the attempt's bound.
func TestCall_StoppedMember_LeftAfterTheAttempt(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close() // the kernel accepts; nobody answers
	good := serve(t, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
	c, _ := New(Config{Endpoints: []string{"http://" + l.Addr().String(), good}, Attempt: 100 * time.Millisecond})
	start := time.Now()
	var r rangeResponse
	if err := c.call(context.Background(), "read", "/v3/kv/range", request{}, &r); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %s", d)
	}
}
