package ident

import (
	"strconv"

	"golang.org/x/sys/unix"
)

const zombieState = 5 // SZOMB in <sys/proc.h>

func readProc(pid int) (procState, error) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return procState{}, err
	}
	if kp.Proc.P_pid != int32(pid) {
		return procState{}, unix.ESRCH
	}
	t := kp.Proc.P_starttime
	start := strconv.FormatInt(int64(t.Sec), 10) + "." + strconv.FormatInt(int64(t.Usec), 10)
	return procState{start: start, zombie: kp.Proc.P_stat == zombieState, process: true}, nil
}

func bootID() string {
	tv, err := unix.SysctlTimeval("kern.boottime")
	if err != nil {
		return ""
	}
	return strconv.FormatInt(int64(tv.Sec), 10) + "." + strconv.FormatInt(int64(tv.Usec), 10)
}

// machineID is left out on macOS: its hardware UUID needs IOKit, and the
// ladder then compares hostnames, which it never trusts alone to kill.
func machineID() string { return "" }

func pidNamespace() string  { return "" }
func timeNamespace() string { return "" }

func readStart(pid int) (procState, error) { return readProc(pid) }
