package wrapper

import (
	"errors"
	"testing"
	"time"
)

// testLease is a lease of ttl taken at start, as the keepalive knows it.
func testLease(ttl time.Duration, start time.Time) *etcdLease {
	l := &etcdLease{ttl: ttl}
	l.taken(start, 0, func() {})
	return l
}

// TestEtcdLease_FenceTermsThenKills: a lease not renewed has the session
// ended a third of the TTL before it can expire, killed a sixth before
// it, each once; the job looks again at least every fifteenth of the TTL.
func TestEtcdLease_FenceTermsThenKills(t *testing.T) {
	ttl := 30 * time.Second
	start := time.Now()
	l := testLease(ttl, start)
	termAt, killAt := start.Add(ttl-ttl/3), start.Add(ttl-ttl/6)
	for _, tc := range []struct {
		at   time.Time
		act  fenceAct
		next time.Duration
	}{
		{start, fenceWait, ttl / 15},
		{termAt.Add(-time.Second), fenceWait, time.Second},
		{termAt, fenceTerm, ttl / 15},
		{termAt.Add(time.Second), fenceWait, ttl / 15}, // termed once
		{killAt.Add(-time.Millisecond), fenceWait, time.Millisecond},
		{killAt, fenceKill, ttl / 15},
		{killAt.Add(time.Hour), fenceWait, ttl / 15}, // killed once
	} {
		act, k, next := l.judge(tc.at)
		if act != tc.act || next != tc.next || !k.Equal(killAt) {
			t.Errorf("at %v past the take: %v, kill at %v, again in %v; want %v, %v, %v",
				tc.at.Sub(start), act, k.Sub(start), next, tc.act, killAt.Sub(start), tc.next)
		}
	}
}

// TestEtcdLease_ReapedNotTermed: a child already reaped gets no TERM; what
// it left is killed at the kill's time all the same.
func TestEtcdLease_ReapedNotTermed(t *testing.T) {
	ttl := 30 * time.Second
	start := time.Now()
	l := testLease(ttl, start)
	l.reaped = true
	if act, _, _ := l.judge(start.Add(ttl - ttl/3)); act != fenceWait {
		t.Fatalf("past TERM's time, the child reaped: %v, want none", act)
	}
	if act, _, _ := l.judge(start.Add(ttl - ttl/6)); act != fenceKill {
		t.Fatalf("past KILL's time, the child reaped: %v, want the kill", act)
	}
}

// TestEtcdLease_GoneKillsAtOnce: a lease etcd says is gone has the session
// killed at once, however far its deadline.
func TestEtcdLease_GoneKillsAtOnce(t *testing.T) {
	ttl := 30 * time.Second
	start := time.Now()
	l := testLease(ttl, start)
	l.gone(errors.New("lease gone"))
	if act, _, next := l.judge(start); act != fenceKill || next != ttl/15 {
		t.Fatalf("the lease gone: %v, again in %v; want the kill", act, next)
	}
}

// TestEtcdLease_RenewedMovesOnOnly: each renewal moves the deadline a TTL
// past its sending; a late answer to an earlier one never moves it back.
func TestEtcdLease_RenewedMovesOnOnly(t *testing.T) {
	ttl := 30 * time.Second
	start := time.Now()
	l := testLease(ttl, start)
	l.renewed(start.Add(10*time.Second), int64(10*time.Second), 30)
	if got, want := l.until(), start.Add(40*time.Second); !got.Equal(want) {
		t.Fatalf("deadline after a renewal at 10s: %v, want %v", got.Sub(start), want.Sub(start))
	}
	if l.safeClock != int64(40*time.Second) {
		t.Fatalf("deadline on the fence's clock %v, want 40s", time.Duration(l.safeClock))
	}
	l.renewed(start.Add(5*time.Second), int64(5*time.Second), 30)
	if got := l.until(); !got.Equal(start.Add(40 * time.Second)) {
		t.Fatalf("an earlier renewal moved the deadline back to %v", got.Sub(start))
	}
	if act, _, _ := l.judge(start.Add(ttl - ttl/3)); act != fenceWait {
		t.Fatalf("the first TERM time, renewed meanwhile: %v, want none", act)
	}
	if l.takeFence() != nil {
		t.Fatal("a fence where none was started")
	}
}
