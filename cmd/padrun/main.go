// Command padrun runs an AI coding-agent harness as a supervised child so
// that one session file never has two live writers.
package main

import (
	"os"
	"runtime"
)

// The child gets SIGKILL when the thread that forked it exits: fork from the
// main thread, which lives as long as padrun.
func init() { runtime.LockOSThread() }

//go:generate go test -run ^TestManPage$ -update-man

func main() { os.Exit(run(os.Args[1:])) }
