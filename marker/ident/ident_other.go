//go:build unix && !linux && !darwin

package ident

import "errors"

// The other Unix systems padrun builds for (the BSDs) give no start token,
// boot id, machine id or pid namespace here: a holder whose pid exists is
// presumed alive, or unknown when it recorded a start token, never dead.

var errUnsupported = errors.New("ident: process start times are not read on this system")

func readProc(int) (procState, error) { return procState{}, errUnsupported }
func bootID() string                  { return "" }
func machineID() string               { return "" }
func pidNamespace() string            { return "" }
func timeNamespace() string           { return "" }

func readStart(pid int) (procState, error) { return readProc(pid) }
