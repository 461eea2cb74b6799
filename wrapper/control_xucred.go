//go:build darwin || freebsd

package wrapper

import "golang.org/x/sys/unix"

// peerUID reads the uid of a unix socket's peer (LOCAL_PEERCRED, what
// getpeereid(3) reads).
func peerUID(fd int) (uint32, error) {
	cred, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	if err != nil {
		return 0, err
	}
	return cred.Uid, nil
}
