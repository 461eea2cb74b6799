//go:build !linux

package ident

import "math"

// pidMax bounds a pid where the kernel does not say: a pid_t (or a
// Windows process id) is 32 bits.
func pidMax() int { return math.MaxInt32 }
