//go:build !linux && !darwin && !windows

package ident

import "errors"

var errUnsupported = errors.New("ident: process tokens are not supported on this system")

func readProc(int) (procState, error) { return procState{}, errUnsupported }
func exists(int) Verdict              { return Unknown }
func bootID() string                  { return "" }
func machineID() string               { return "" }
func pidNamespace() string            { return "" }

func readStart(pid int) (procState, error) { return readProc(pid) }
