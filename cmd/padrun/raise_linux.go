package main

import (
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// raise kills padrun by sig as if it had died of it, with no core dump: the
// Go runtime's handler is replaced by SIG_DFL with a raw rt_sigaction (for
// QUIT it would print a goroutine dump and exit 2), the signal unblocked, and
// sent to this very thread. It returns only if padrun survived.
func raise(sig syscall.Signal) {
	unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{}) // Best effort.
	if sig == unix.SIGKILL || sig == unix.SIGSTOP {
		unix.Kill(os.Getpid(), sig)
		return
	}
	var act [4]uint64 // struct kernel_sigaction, all zero: SIG_DFL, no flags, empty mask
	unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0)
	var set unix.Sigset_t
	set.Val[(sig-1)/64] |= 1 << ((uint(sig) - 1) % 64)
	unix.PthreadSigmask(unix.SIG_UNBLOCK, &set, nil) // Best effort.
	unix.Tgkill(os.Getpid(), unix.Gettid(), sig)     // Best effort.
}
