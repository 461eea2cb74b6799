package etcdhold

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/padrun/padrun/marker"
)

// i64 is an int64 as the gateway writes it: a string, or a number.
type i64 int64

func (n *i64) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "" || s == "null" {
		*n = 0
		return nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	*n = i64(v)
	return err
}

func (n i64) MarshalJSON() ([]byte, error) {
	return []byte(`"` + strconv.FormatInt(int64(n), 10) + `"`), nil
}

type header struct {
	Revision i64 `json:"revision"`
}

type keyValue struct {
	Key            []byte `json:"key"`
	Value          []byte `json:"value"`
	CreateRevision i64    `json:"create_revision"`
	ModRevision    i64    `json:"mod_revision"`
	Lease          i64    `json:"lease"`
}

type rangeResponse struct {
	Header header     `json:"header"`
	Kvs    []keyValue `json:"kvs"`
	More   bool       `json:"more"`
}

type txnResponse struct {
	Header    header `json:"header"`
	Succeeded bool   `json:"succeeded"`
	Responses []struct {
		Range *rangeResponse `json:"response_range"`
	} `json:"responses"`
}

type compare struct {
	Target         string `json:"target"`
	Key            []byte `json:"key"`
	CreateRevision *i64   `json:"createRevision,omitempty"`
	ModRevision    *i64   `json:"modRevision,omitempty"`
	Lease          *i64   `json:"lease,omitempty"`
}

type request map[string]any

func ptr(n int64) *i64 { v := i64(n); return &v }

// Holder is what a key says of its session: the marker's facts (machine,
// pid, start token, agent, since) and the lease that keeps the key.
type Holder struct {
	marker.Marker
	Lease string `json:"lease"` // hexadecimal, as etcdctl prints lease ids
}

// Found is a key as read: its holder (nil when its value is not a
// holder's), its lease and the revision it was read at.
type Found struct {
	Key      string
	Holder   *Holder
	Lease    int64
	Revision int64 // the store's revision when read: a watch after it sees the key go
	Mod      int64 // the key's own mod revision
}

func found(kv keyValue, rev int64) *Found {
	f := &Found{Key: string(kv.Key), Lease: int64(kv.Lease), Revision: rev, Mod: int64(kv.ModRevision)}
	var h Holder
	if json.Unmarshal(kv.Value, &h) == nil && h.Pid > 0 {
		f.Holder = &h
	}
	return f
}

// HeldError is a refusal: another session holds the key. It unwraps to the
// *marker.HeldError that refusals print.
type HeldError struct {
	*marker.HeldError
	Found *Found
}

func (e *HeldError) Unwrap() error { return e.HeldError }

// Hold is a taken set of keys and the lease they live under.
type Hold struct {
	c     *Client
	Lease int64
	Keys  []string
	value []byte // the holder, as every key of the hold says it
}

// LeaseHex is the lease id as etcdctl prints it.
func LeaseHex(id int64) string { return strconv.FormatInt(id, 16) }

// Take grants a lease and creates every key under it, each only if absent
// (its create revision is 0): all of them, or none. A key held by another
// lease is a *HeldError.
func (c *Client) Take(ctx context.Context, keys []string, h Holder) (*Hold, error) {
	var g struct {
		ID  i64 `json:"ID"`
		TTL i64 `json:"TTL"`
	}
	ttl := int64((c.cfg.TTL + 999_999_999) / 1_000_000_000)
	if err := c.call(ctx, "grant a lease", "/v3/lease/grant", request{"TTL": strconv.FormatInt(ttl, 10)}, &g); err != nil {
		return nil, err
	}
	if g.ID == 0 || g.TTL <= 0 {
		return nil, fmt.Errorf("etcd: grant a lease: an answer without a lease (id %d, TTL %d)", g.ID, g.TTL)
	}
	hold := &Hold{c: c, Lease: int64(g.ID)}
	h.Lease = LeaseHex(hold.Lease)
	value, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	hold.value = value
	for _, k := range keys {
		if err := hold.Add(ctx, k); err != nil {
			hold.Release(context.WithoutCancel(ctx)) // Best effort: the lease's end frees what it took.
			return nil, err
		}
	}
	return hold, nil
}

// Add creates key under the hold's lease, only if absent; a key held
// by another lease is a *HeldError. A key the hold has already is kept.
func (h *Hold) Add(ctx context.Context, key string) error {
	if slices.Contains(h.Keys, key) {
		return nil
	}
	if err := h.c.create(ctx, key, h.value, h.Lease); err != nil {
		return err
	}
	h.Keys = append(h.Keys, key)
	return nil
}

// Drop deletes key while it is still under the hold's lease: a session
// the run no longer holds.
func (h *Hold) Drop(ctx context.Context, key string) error {
	i := slices.Index(h.Keys, key)
	if i < 0 {
		return nil
	}
	h.Keys = slices.Delete(h.Keys, i, i+1)
	return h.deleteOwn(ctx, key)
}

// deleteOwn deletes key if the hold's lease is still its lease.
func (h *Hold) deleteOwn(ctx context.Context, key string) error {
	var r txnResponse
	return h.c.call(ctx, "delete "+key, "/v3/kv/txn", request{
		"compare": []compare{{Target: "LEASE", Key: []byte(key), Lease: ptr(h.Lease)}},
		"success": []request{{"requestDeleteRange": request{"key": []byte(key)}}},
	}, &r)
}

// create puts key under lease if it has no create revision; else it reads
// who holds it. A retry that finds the key under our own lease (an earlier
// try whose answer was lost) has it.
func (c *Client) create(ctx context.Context, key string, value []byte, lease int64) error {
	for range 3 {
		var r txnResponse
		err := c.call(ctx, "create "+key, "/v3/kv/txn", request{
			"compare": []compare{{Target: "CREATE", Key: []byte(key), CreateRevision: ptr(0)}},
			"success": []request{{"requestPut": request{"key": []byte(key), "value": value, "lease": i64(lease)}}},
			"failure": []request{{"requestRange": request{"key": []byte(key)}}},
		}, &r)
		if err != nil {
			return err
		}
		if r.Succeeded {
			return nil
		}
		if len(r.Responses) != 1 || r.Responses[0].Range == nil {
			return fmt.Errorf("etcd: create %s: an answer that is neither a success nor the holder", key)
		}
		kvs := r.Responses[0].Range.Kvs
		if len(kvs) == 0 {
			continue // gone between the compare and the read: try again
		}
		f := found(kvs[0], int64(r.Header.Revision))
		if f.Lease == lease {
			return nil
		}
		return heldBy(key, f)
	}
	return fmt.Errorf("etcd: create %s: the key keeps changing", key)
}

// heldBy is the refusal for a key found held.
func heldBy(key string, f *Found) *HeldError {
	he := &marker.HeldError{File: key, Kind: marker.HeldPolled, Judgement: marker.Etcd(key, LeaseHex(f.Lease), f.Lease == 0, nil)}
	if f.Lease != 0 && f.Holder != nil {
		m := f.Holder.Marker
		he.Holder = &m
		he.Judgement = marker.Etcd(key, LeaseHex(f.Lease), false, &m)
	}
	return &HeldError{HeldError: he, Found: f}
}

// ErrLeaseGone says the lease expired or was revoked: the keys are gone,
// and another session may hold them now.
var ErrLeaseGone = errors.New("etcd: the lease is gone")

// KeepAlive renews the lease once and returns the TTL it was renewed to.
func (h *Hold) KeepAlive(ctx context.Context) (ttlSeconds int64, err error) {
	body, _ := json.Marshal(request{"ID": i64(h.Lease)})
	err = h.c.each(ctx, "keep the lease alive", func(ctx context.Context, e endpoint) error {
		x, err := h.c.post(ctx, e, "/v3/lease/keepalive", body)
		if err != nil {
			return err
		}
		defer x.Close()
		var msg struct {
			Result *struct {
				TTL i64 `json:"TTL"`
			} `json:"result"`
			Error *serverError `json:"error"`
		}
		if x.status != 200 {
			var b [4096]byte
			n, _ := x.body.Read(b[:])
			return statusError(x.status, b[:n])
		}
		if err := json.NewDecoder(x.body).Decode(&msg); err != nil {
			return fmt.Errorf("unreadable answer: %w", err)
		}
		switch {
		case msg.Error != nil:
			return msg.Error
		case msg.Result == nil:
			return errors.New("an answer without a result")
		}
		ttlSeconds = int64(msg.Result.TTL)
		return nil
	})
	if err == nil && ttlSeconds <= 0 {
		return 0, ErrLeaseGone
	}
	return ttlSeconds, err
}

// Release deletes the keys that are still under our lease, and revokes it.
func (h *Hold) Release(ctx context.Context) error {
	var first error
	for _, k := range h.Keys {
		if err := h.deleteOwn(ctx, k); err != nil && first == nil {
			first = err
		}
	}
	var r struct{}
	if err := h.c.call(ctx, "revoke the lease", "/v3/lease/revoke", request{"ID": i64(h.Lease)}, &r); err != nil && first == nil {
		var se *serverError
		if !errors.As(err, &se) || !strings.Contains(se.Message, "not found") {
			first = err
		}
	}
	return first
}
