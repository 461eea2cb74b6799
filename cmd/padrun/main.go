// Command padrun runs an AI coding-agent harness as a supervised child so
// that one session file never has two live writers.
package main

import (
	"os"
	"path/filepath"

	"github.com/padrun/padrun/wrapper"
)

// The child gets SIGKILL when the thread that forked it exits:
// supervise.Start locks the main goroutine, which forks, to its thread just
// before the fork, and the main goroutine lives as long as padrun.

//go:generate go test -run ^TestManPage$ -update-man

func main() {
	switch filepath.Base(os.Args[0]) {
	case wrapper.FenceName:
		os.Exit(wrapper.FenceMain(os.Args[1:])) // a session's fence, started by padrun (docs/spec.md §15)
	}
	os.Exit(run(mainArgs()))
}
