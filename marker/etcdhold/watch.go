package etcdhold

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// WaitGone blocks until the key f names is deleted (its lease revoked or
// expired) after the revision f was read at, or ctx ends (its cause is
// returned). It watches the key, polling nothing. A watch that ends after
// it began (compaction, a member that lost its leader) returns nil: the
// caller reads the key anew. Members that cannot start one are asked in
// rounds while one may yet answer, as each does.
func (c *Client) WaitGone(ctx context.Context, f *Found) error {
	body, _ := json.Marshal(request{"create_request": request{"key": []byte(f.Key), "start_revision": i64(f.Revision + 1)}})
	deadline := time.Now().Add(c.cfg.Patience)
	for {
		ue := &unreachableError{Op: "watch " + f.Key}
		c.mu.Lock()
		first := c.next
		c.mu.Unlock()
		for i := 0; i < len(c.eps); i++ {
			e := c.eps[(first+i)%len(c.eps)]
			began, err := c.watchOn(ctx, e, body)
			if cause := context.Cause(ctx); cause != nil {
				return cause
			}
			if err == nil {
				return nil
			}
			if began {
				// Not at once: a watch that keeps ending must not spin.
				return pause(ctx, 100*time.Millisecond)
			}
			ue.Attempts = append(ue.Attempts, attempt{e.url, err})
		}
		if !ue.hopeful() || time.Now().After(deadline) {
			return ue
		}
		if err := pause(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}

// pause waits d, or returns ctx's cause.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}

// watchOn watches on one member until the key goes (nil), or reports
// whether the watch began before it failed.
func (c *Client) watchOn(ctx context.Context, e endpoint, body []byte) (began bool, err error) {
	if err := c.authenticate(ctx, e); err != nil {
		return false, err
	}
	dctx, cancel := context.WithTimeout(ctx, c.cfg.Attempt)
	defer cancel()
	// A member cut off from the leader ends the watch (clientv3's
	// WithRequireLeader), rather than leave the waiter deaf to a deletion.
	x, err := c.post(dctx, e, "/v3/watch", body, "Grpc-Metadata-hasleader: true")
	if err != nil {
		return false, err
	}
	defer x.Close()
	x.detach()
	x.conn.SetDeadline(time.Time{}) // Best effort: the watch lasts as long as ctx.
	stop := context.AfterFunc(ctx, func() { x.conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if x.status != 200 {
		b, _ := io.ReadAll(io.LimitReader(x.body, 4096))
		return false, statusError(x.status, b)
	}
	dec := json.NewDecoder(bufio.NewReader(x.body))
	created := false
	for {
		var msg struct {
			Result *struct {
				Created         bool `json:"created"`
				Canceled        bool `json:"canceled"`
				CompactRevision i64  `json:"compact_revision"`
				Events          []struct {
					Type string `json:"type"`
				} `json:"events"`
			} `json:"result"`
			Error *serverError `json:"error"`
		}
		if err := dec.Decode(&msg); err != nil {
			if created && errors.Is(err, io.EOF) {
				err = errors.New("the watch ended")
			}
			return created, err
		}
		switch {
		case msg.Error != nil:
			return created, msg.Error
		case msg.Result == nil:
			return created, errors.New("a watch answer without a result")
		case msg.Result.Canceled || msg.Result.CompactRevision > 0:
			return true, nil // read it anew
		case msg.Result.Created:
			created = true
		}
		for _, ev := range msg.Result.Events {
			if ev.Type == "DELETE" {
				return true, nil
			}
		}
	}
}

// Get reads a key; nil when there is none.
func (c *Client) Get(ctx context.Context, key string) (*Found, error) {
	var r rangeResponse
	if err := c.call(ctx, "read "+key, "/v3/kv/range", request{"key": []byte(key)}, &r); err != nil {
		return nil, err
	}
	if len(r.Kvs) == 0 {
		return nil, nil
	}
	return found(r.Kvs[0], int64(r.Header.Revision)), nil
}

// List reads every key under the prefix, at most limit of them.
func (c *Client) List(ctx context.Context, limit int) ([]*Found, error) {
	p := []byte(c.cfg.Prefix)
	end := append([]byte(nil), p...)
	end[len(end)-1]++ // the range end of a prefix, as etcdctl --prefix
	var r rangeResponse
	if err := c.call(ctx, "list "+c.cfg.Prefix, "/v3/kv/range", request{"key": p, "range_end": end, "limit": i64(limit)}, &r); err != nil {
		return nil, err
	}
	out := make([]*Found, 0, len(r.Kvs))
	for _, kv := range r.Kvs {
		out = append(out, found(kv, int64(r.Header.Revision)))
	}
	return out, nil
}

// TimeToLive is a lease's remaining seconds; 0 or less: it is gone.
func (c *Client) TimeToLive(ctx context.Context, lease int64) (int64, error) {
	var r struct {
		TTL i64 `json:"TTL"`
	}
	if err := c.call(ctx, "read lease "+LeaseHex(lease), "/v3/lease/timetolive", request{"ID": i64(lease)}, &r); err != nil {
		return 0, err
	}
	return int64(r.TTL), nil
}

// Delete deletes f's key if it is unchanged since f was read.
func (c *Client) Delete(ctx context.Context, f *Found) (bool, error) {
	var r txnResponse
	err := c.call(ctx, "delete "+f.Key, "/v3/kv/txn", request{
		"compare": []compare{{Target: "MOD", Key: []byte(f.Key), ModRevision: ptr(f.Mod)}},
		"success": []request{{"requestDeleteRange": request{"key": []byte(f.Key)}}},
	}, &r)
	if err != nil {
		return false, fmt.Errorf("etcd: %w", err)
	}
	return r.Succeeded, nil
}

// KeyState is what a key's lease says of its holder, as status, ls and
// unlock judge it (docs/spec.md §15): a key is held while its lease is
// alive; one with no lease, or whose lease expired, no live padrun keeps.
type KeyState struct {
	Lease int64 // 0: none
	TTL   int64 // seconds left; 0 or less: gone
}

// State reads the state of f's lease.
func (c *Client) State(ctx context.Context, f *Found) (KeyState, error) {
	s := KeyState{Lease: f.Lease}
	if f.Lease == 0 {
		return s, nil
	}
	ttl, err := c.TimeToLive(ctx, f.Lease)
	s.TTL = ttl
	return s, err
}

// Held reports whether a live lease keeps the key: unlock never deletes
// such a key, even with --force.
func (s KeyState) Held() bool { return s.Lease != 0 && s.TTL > 0 }

func (s KeyState) String() string {
	switch {
	case s.Lease == 0:
		return "leaseless: no live padrun's, padrun unlock removes it"
	case s.TTL <= 0:
		return "expired"
	}
	return fmt.Sprintf("alive, expires in %ds unless renewed", s.TTL)
}
