package ident

import (
	"testing"

	"github.com/google/uuid"
)

// TestNewUUID: a version 4, variant RFC 9562 UUID, as google/uuid parses
// it, and no two alike.
func TestNewUUID(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		s := NewUUID()
		u, err := uuid.Parse(s)
		if err != nil || len(s) != 36 || u.Version() != 4 || u.Variant() != uuid.RFC4122 || u.String() != s {
			t.Fatalf("NewUUID() = %q: version %v, variant %v, err %v", s, u.Version(), u.Variant(), err)
		}
		if seen[s] {
			t.Fatalf("NewUUID() gave %q twice", s)
		}
		seen[s] = true
	}
}

// FuzzValidUUID: ValidUUID agrees with google/uuid's Validate, which the
// harness adapters used before it, on every input.
func FuzzValidUUID(f *testing.F) {
	for _, s := range []string{
		"0190b3c4-5e6f-7a8b-9c0d-1e2f3a4b5c6d", "0190B3C4-5E6F-7A8B-9C0D-1E2F3A4B5C6D",
		"urn:uuid:0190b3c4-5e6f-7a8b-9c0d-1e2f3a4b5c6d", "URN:UUID:0190b3c4-5e6f-7a8b-9c0d-1e2f3a4b5c6d",
		"{0190b3c4-5e6f-7a8b-9c0d-1e2f3a4b5c6d}", "0190b3c45e6f7a8b9c0d1e2f3a4b5c6d",
		"0190b3c4-5e6f-7a8b-9c0d-1e2f3a4b5c6", "0190b3c4x5e6f-7a8b-9c0d-1e2f3a4b5c6d", "0190b3c4-5e6f-7a8b-9c0d-1e2f3a4b5c6g",
		"(0190b3c4-5e6f-7a8b-9c0d-1e2f3a4b5c6d)", "", "latest", "../0190b3c4-5e6f-7a8b-9c0d-1e2f3a4b5c",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := ValidUUID(s), uuid.Validate(s) == nil; got != want {
			t.Fatalf("ValidUUID(%q) = %v, google/uuid's Validate says %v", s, got, want)
		}
		_, err := uuid.Parse(s)
		if got, want := ValidUUID36(s), err == nil && len(s) == 36; got != want {
			t.Fatalf("ValidUUID36(%q) = %v, google/uuid's Parse says %v", s, got, want)
		}
	})
}
