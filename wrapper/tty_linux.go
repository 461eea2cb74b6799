package wrapper

import (
	"os"
	"strings"
)

// terminal names the terminal padrun runs on (pts/3, tty1), from its
// standard descriptors, or "": a refusal names it so that a person knows
// which window holds the session.
func terminal() string {
	for _, fd := range []string{"0", "2", "1"} {
		if t, err := os.Readlink("/proc/self/fd/" + fd); err == nil && strings.HasPrefix(t, "/dev/") &&
			(strings.HasPrefix(t, "/dev/pts/") || strings.HasPrefix(t, "/dev/tty")) && t != "/dev/tty" {
			return strings.TrimPrefix(t, "/dev/")
		}
	}
	return ""
}
