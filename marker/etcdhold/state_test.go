package etcdhold

import "testing"

// A key is held only while a lease keeps it: unlock deletes a leaseless
// key and one whose lease expired, never one whose lease is alive.
func TestKeyState_HeldOnlyByALiveLease(t *testing.T) {
	for _, tc := range []struct {
		s    KeyState
		held bool
		want string
	}{
		{KeyState{}, false, "leaseless: no live padrun's, padrun unlock removes it"},
		{KeyState{Lease: 7, TTL: 0}, false, "expired"},
		{KeyState{Lease: 7, TTL: -1}, false, "expired"},
		{KeyState{Lease: 7, TTL: 12}, true, "alive, expires in 12s unless renewed"},
		{KeyState{Lease: 0, TTL: 12}, false, "leaseless: no live padrun's, padrun unlock removes it"},
	} {
		if got := tc.s.Held(); got != tc.held {
			t.Errorf("%+v: Held() = %v, want %v", tc.s, got, tc.held)
		}
		if got := tc.s.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.s, got, tc.want)
		}
	}
}
