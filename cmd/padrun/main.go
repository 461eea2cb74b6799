// Command padrun runs an AI coding-agent harness as a supervised child so
// that one session file never has two live writers.
package main

import "os"

// The child gets SIGKILL when the thread that forked it exits:
// supervise.Start locks the main goroutine, which forks, to its thread just
// before the fork, and the main goroutine lives as long as padrun.

//go:generate go test -run ^TestManPage$ -update-man

func main() { os.Exit(run(mainArgs())) }
