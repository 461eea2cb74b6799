//go:build windows || dragonfly || netbsd || openbsd

package wrapper

import (
	"errors"
	"fmt"
	"net"
	"os"
)

// errNoControl: padrun cannot check a control socket's peer here (no
// peer credentials it reads), so companions are unavailable.
var errNoControl = errors.New("wrapper: companions need a control socket whose peer can be checked, which this platform lacks")

// controlDir has no safe home here: companions are unavailable.
func controlDir(string) (string, error) { return "", errNoControl }

func checkPeer(net.Conn) error { return errNoControl }

// ownFolder creates dir when it is missing and accepts only a real folder
// (no symlink); who may write it is not checked here.
func ownFolder(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("wrapper: create %s: %w", dir, err)
	}
	return checkFolder(dir)
}

// checkFolder accepts dir only as a real folder (no symlink).
func checkFolder(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("wrapper: stat %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("wrapper: %s is not a folder (a symlink?): padrun will not use it", dir)
	}
	return nil
}
