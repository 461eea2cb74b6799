package registry

import (
	"errors"
	"os"
	"strconv"
	"sync"

	"github.com/padrun/padrun/marker/ident"
)

// Owner is what a record says of the session that owns it, in pad's terms:
// its pid with the pid's start token, and the messaging socket with the
// identity it had when the record was written.
type Owner struct {
	PID                 int
	ProcStart           string
	Socket              string
	SocketMtimeUnixNano int64
	SocketIno           uint64
	SocketDev           uint64
	// PidNamespace and TimeNamespace are those the pid and its start token
	// were read in, when the record says ("" when it does not).
	PidNamespace  string
	TimeNamespace string
}

// readerNamespaces are this process's pid and time namespaces, read once.
var readerNamespaces = sync.OnceValues(ident.Namespaces)

// otherNamespace says why o's pid cannot be checked from this process's
// namespaces, or "" when it can.
func otherNamespace(o Owner) string {
	pidNS, timeNS := readerNamespaces()
	return ident.OtherNamespace(o.PidNamespace, o.TimeNamespace, pidNS, timeNS)
}

// OwnerLiveness is pad's verdict on an owner: every recorded signal must
// agree. The socket, when recorded, must still be there with the identity
// recorded (inode and device, else mtime): a socket outlives a SIGKILLed
// owner, and one rebound at the same path is another session. The pid, when
// recorded, must be alive and still carry its start token. Any dead -> dead;
// else any unknown -> unknown; else alive. No socket and no pid -> dead.
// A pid of another pid or time namespace is unknown, never dead: it names
// another process here, or its start token was read shifted.
func OwnerLiveness(o Owner) (ident.Verdict, string) {
	if o.Socket == "" && o.PID <= 0 {
		return ident.Dead, "no socket and no pid recorded"
	}
	verdict, reason := ident.Alive, ""
	if o.Socket != "" {
		v, why := socketLiveness(o)
		if v == ident.Dead {
			return v, why
		}
		verdict, reason = v, why
	}
	if o.PID > 0 {
		v, why := ident.Unknown, ""
		if ns := otherNamespace(o); ns != "" {
			why = ns + ", pid " + strconv.Itoa(o.PID) + " cannot be checked"
		} else {
			v, why = pidLiveness(o.PID, o.ProcStart)
		}
		if v == ident.Dead {
			return v, why
		}
		if verdict == ident.Alive {
			verdict = v
		}
		reason = join(reason, why)
	}
	return verdict, reason
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// socketLiveness judges the recorded socket as pad does: stat follows a
// symlink, and only a missing socket is proof of absence.
func socketLiveness(o Owner) (ident.Verdict, string) {
	fi, err := os.Stat(o.Socket)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return ident.Dead, "socket " + o.Socket + " is gone"
	case err != nil:
		return ident.Unknown, "socket " + o.Socket + " cannot be examined: " + err.Error()
	case o.SocketMtimeUnixNano == 0:
		return ident.Dead, "socket " + o.Socket + " has no recorded identity"
	}
	if o.SocketIno != 0 {
		if ino, dev, ok := statIdentity(fi); ok {
			if ino == o.SocketIno && dev == o.SocketDev {
				return ident.Alive, "socket " + o.Socket + " is the one recorded (inode " + strconv.FormatUint(ino, 10) + ")"
			}
			return ident.Dead, "socket " + o.Socket + " was rebound (inode " + strconv.FormatUint(ino, 10) + ", recorded " + strconv.FormatUint(o.SocketIno, 10) + ")"
		}
	}
	if fi.ModTime().UnixNano() == o.SocketMtimeUnixNano {
		return ident.Alive, "socket " + o.Socket + " is the one recorded (mtime)"
	}
	return ident.Dead, "socket " + o.Socket + " was rebound (its mtime differs)"
}
