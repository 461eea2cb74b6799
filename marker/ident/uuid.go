package ident

import (
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"strings"
)

// NewUUID is a random (version 4) UUID in its 36-character form: a
// marker's nonce, a new session's id. What these need is that no two are
// equal; the runtime's generator, seeded from the kernel's randomness in
// every process, gives that without crypto/rand, whose start-up (a DRBG
// with its AES, GCM and SHA self-registrations) every run would pay.
func NewUUID() string {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(b[8:], rand.Uint64())
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // the RFC 9562 variant
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	hex.Encode(s[9:13], b[4:6])
	hex.Encode(s[14:18], b[6:8])
	hex.Encode(s[19:23], b[8:10])
	hex.Encode(s[24:], b[10:])
	s[8], s[13], s[18], s[23] = '-', '-', '-', '-'
	return string(s[:])
}

// ValidUUID reports whether s is a UUID in one of the forms that
// github.com/google/uuid's Validate accepts, the harnesses' own parser:
// xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, that with a urn:uuid: prefix (any
// case) or in braces, or 32 hex digits.
func ValidUUID(s string) bool {
	switch len(s) {
	case 36:
	case 36 + 9:
		if !strings.EqualFold(s[:9], "urn:uuid:") {
			return false
		}
		s = s[9:]
	case 36 + 2:
		if s[0] != '{' || s[len(s)-1] != '}' {
			return false
		}
		s = s[1 : len(s)-1]
	case 32:
		return isHex(s)
	default:
		return false
	}
	return s[8] == '-' && s[13] == '-' && s[18] == '-' && s[23] == '-' &&
		isHex(s[0:8]) && isHex(s[9:13]) && isHex(s[14:18]) && isHex(s[19:23]) && isHex(s[24:])
}

// ValidUUID36 reports whether s is a UUID in its 36-character form alone.
func ValidUUID36(s string) bool { return len(s) == 36 && ValidUUID(s) }

func isHex(s string) bool {
	for i := range len(s) {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
