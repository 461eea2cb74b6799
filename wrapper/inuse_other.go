//go:build !linux

package wrapper

import (
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/padrun/padrun/marker/ident"
)

// startedAt is when pid started, by the wall clock, read from its start
// token: seconds.microseconds on macOS, nanoseconds since 1970 on Windows.
func startedAt(pid int) (time.Time, bool) {
	token, err := ident.StartToken(pid)
	if err != nil {
		return time.Time{}, false
	}
	switch runtime.GOOS {
	case "darwin":
		sec, usec, ok := strings.Cut(token, ".")
		s, err1 := strconv.ParseInt(sec, 10, 64)
		u, err2 := strconv.ParseInt(usec, 10, 64)
		if !ok || err1 != nil || err2 != nil {
			return time.Time{}, false
		}
		return time.Unix(s, u*1000), true
	case "windows":
		ns, err := strconv.ParseInt(token, 10, 64)
		if err != nil {
			return time.Time{}, false
		}
		return time.Unix(0, ns), true
	}
	return time.Time{}, false
}

// ofTree cannot tell here which process is of the run's tree: none is, so
// no in-use lock is removed as the run's.
func ofTree(int, int) bool { return false }

// inUseNotify is the prompt watch of Linux; here the job's look every
// second is all there is, and nothing is the run's anyway (ofTree).
type inUseNotify struct{}

func startInUseNotify(func(dir string), func()) *inUseNotify { return nil }
func (*inUseNotify) add(string)                              {}
func (*inUseNotify) stop()                                   {}
