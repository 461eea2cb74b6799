//go:build windows || dragonfly || netbsd || openbsd

package wrapper

import (
	"errors"
	"net"
)

// errNoControl: padrun cannot check a control socket's peer here (no
// peer credentials it reads), so companions are unavailable.
var errNoControl = errors.New("wrapper: companions need a control socket whose peer can be checked, which this platform lacks")

// controlDir has no safe home here: companions are unavailable.
func controlDir(string) (string, error) { return "", errNoControl }

func checkPeer(net.Conn) error { return errNoControl }
