// Package jsonenc appends JSON values byte for byte as encoding/json's
// Marshal writes them, for the fixed shapes padrun writes on its start-up
// path (markers and registry records), without reflection.
package jsonenc

import (
	"strconv"
	"unicode/utf8"
)

const hex = "0123456789abcdef"

// String appends s as a JSON string, escaped as json.Marshal escapes it:
// HTML's <, > and & as \u003c, \u003e and \u0026, U+2028 and U+2029, and
// each byte of invalid UTF-8 as \ufffd.
func String(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case c == '\u2028' || c == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// Int appends n.
func Int(dst []byte, n int) []byte { return strconv.AppendInt(dst, int64(n), 10) }

// Bool appends b.
func Bool(dst []byte, b bool) []byte { return strconv.AppendBool(dst, b) }

// Key appends "name": after sep (a comma, or nothing for the first
// field) and indent (nothing for compact output). name must need no
// escaping.
func Key(dst []byte, sep, indent, name string) []byte {
	dst = append(dst, sep...)
	dst = append(dst, indent...)
	dst = append(dst, '"')
	dst = append(dst, name...)
	dst = append(dst, '"', ':')
	return dst
}
