// Command libfloor is the Go floor of BenchmarkOverhead linked with the
// libraries padrun is built on; with -signals it also registers the
// signals docs/spec.md §9 has padrun handle. It is the least a Go program with
// padrun's libraries and signals costs: usage libfloor [-signals] F CMD...
package main

import (
	"os"
	"os/signal"
	"syscall"

	_ "github.com/creack/pty"
	_ "github.com/rs/zerolog"
	_ "github.com/spf13/pflag"
	"golang.org/x/sys/unix"
)

func main() {
	args := os.Args[1:]
	if args[0] == "-signals" {
		args = args[1:]
		c := make(chan os.Signal, 16)
		for _, s := range []os.Signal{unix.SIGTERM, unix.SIGHUP, unix.SIGINT, unix.SIGQUIT, unix.SIGABRT,
			unix.SIGSEGV, unix.SIGBUS, unix.SIGFPE, unix.SIGILL, unix.SIGSYS, unix.SIGTRAP,
			unix.SIGUSR1, unix.SIGUSR2, unix.SIGWINCH, unix.SIGCONT, unix.SIGCHLD} {
			if !signal.Ignored(s) {
				signal.Notify(c, s)
			}
		}
	}
	f := args[0]
	fd, _ := syscall.Open(f+".live.lock", syscall.O_RDWR|syscall.O_CREAT|syscall.O_CLOEXEC, 0o600)
	syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
	os.WriteFile(f+".live.json.tmp", []byte("{\"v\":1,\"pid\":1}"), 0o600)
	os.Rename(f+".live.json.tmp", f+".live.json")
	pid, _ := syscall.ForkExec(args[1], args[1:], &syscall.ProcAttr{Files: []uintptr{0, 1, 2}})
	var ws syscall.WaitStatus
	syscall.Wait4(pid, &ws, 0, nil)
	os.Remove(f + ".live.json")
	os.Remove(f + ".live.lock")
}
