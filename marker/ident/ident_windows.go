package ident

import (
	"strconv"

	"golang.org/x/sys/windows"
)

const stillActive = 259 // STILL_ACTIVE

func readProc(pid int) (procState, error) {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return procState{}, err
	}
	defer windows.CloseHandle(h)
	var created, exited, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(h, &created, &exited, &kernel, &user); err != nil {
		return procState{}, err
	}
	var code uint32
	zombie := windows.GetExitCodeProcess(h, &code) == nil && code != stillActive
	return procState{start: strconv.FormatInt(created.Nanoseconds(), 10), zombie: zombie, process: true}, nil
}

func exists(pid int) Verdict {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	switch err {
	case nil:
		windows.CloseHandle(h)
		return Alive
	case windows.ERROR_INVALID_PARAMETER:
		return Dead
	case windows.ERROR_ACCESS_DENIED:
		return Alive
	}
	return Unknown
}

// bootID, machineID and pidNamespace are left out on Windows: verdicts that
// need them are unknown, never dead.
func bootID() string        { return "" }
func machineID() string     { return "" }
func pidNamespace() string  { return "" }
func timeNamespace() string { return "" }

func readStart(pid int) (procState, error) { return readProc(pid) }
