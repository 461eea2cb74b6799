//go:build linux || darwin || freebsd

package wrapper

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// controlDir is the folder of padrun's control sockets and companion
// files: runtimeDir/padrun ($XDG_RUNTIME_DIR), else padrun-<uid> in the
// temp folder.
// It is created 0700 and must be the user's own real folder that nobody
// else can write: anything else is refused, never repaired.
func controlDir(runtimeDir string) (string, error) {
	dir := filepath.Join(os.TempDir(), "padrun-"+strconv.Itoa(os.Getuid()))
	if filepath.IsAbs(runtimeDir) {
		dir = filepath.Join(runtimeDir, "padrun")
	}
	if err := ownFolder(dir); err != nil {
		return "", err
	}
	return dir, nil
}

// ownFolder creates dir 0700 when it is missing, and accepts it only as
// the user's own real folder that nobody else can write: anything else is
// refused, never repaired.
func ownFolder(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("wrapper: create %s: %w", dir, err)
	}
	return checkFolder(dir)
}

// checkFolder accepts dir only as the user's own real folder that nobody
// else can write.
func checkFolder(dir string) error {
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return fmt.Errorf("wrapper: stat %s: %w", dir, err)
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		return fmt.Errorf("wrapper: %s is not a folder (a symlink?): padrun will not use it", dir)
	case int(st.Uid) != os.Getuid():
		return fmt.Errorf("wrapper: %s belongs to uid %d, not to you: padrun will not use it", dir, st.Uid)
	case st.Mode&0o077 != 0:
		return fmt.Errorf("wrapper: %s has mode %04o: others may change it, padrun will not use it", dir, st.Mode&0o777)
	}
	return nil
}

// checkPeer accepts only a peer that runs as padrun's own uid.
func checkPeer(conn net.Conn) error {
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		return fmt.Errorf("not a unix socket")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return err
	}
	var uid uint32
	var uerr error
	if err := raw.Control(func(fd uintptr) { uid, uerr = peerUID(int(fd)) }); err != nil {
		return err
	}
	if uerr != nil {
		return fmt.Errorf("peer credentials: %w", uerr)
	}
	if int(uid) != os.Getuid() {
		return fmt.Errorf("uid %d may not use this padrun's control socket", uid)
	}
	return nil
}
