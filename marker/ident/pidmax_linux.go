package ident

import (
	"strconv"
	"strings"
	"sync"
)

// pidMaxLimit is the largest pid_max Linux allows (PID_MAX_LIMIT on 64-bit
// systems): the bound when /proc/sys/kernel/pid_max cannot be read.
const pidMaxLimit = 1 << 22

// pidMax is the kernel's pid_max, read once.
var pidMax = sync.OnceValue(func() int {
	b, err := readSmall("/proc/sys/kernel/pid_max")
	if err != nil {
		return pidMaxLimit
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n <= 0 || n > pidMaxLimit {
		return pidMaxLimit
	}
	return n
})
