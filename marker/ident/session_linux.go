package ident

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// GroupProcs lists the live processes in process group pgid or in session
// sid (either may be 0: not checked) that started no earlier than since, a
// start token (empty: any time). A process that started before the session
// cannot belong to it.
func GroupProcs(pgid, sid int, since string) ([]int, error) {
	if pgid <= 0 && sid <= 0 {
		return nil, nil
	}
	des, err := os.ReadDir("/proc")
	if err != nil {
		return nil, errors.New("ident: list processes: " + err.Error())
	}
	floor, _ := strconv.ParseUint(since, 10, 64) // Best effort: 0 keeps every process.
	var pids []int
	for _, de := range des {
		pid, err := strconv.Atoi(de.Name())
		if err != nil {
			continue
		}
		b, err := readSmall("/proc/" + de.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		st, ok := parseGroup(b)
		if !ok || st.state == 'Z' || st.state == 'X' || st.start < floor {
			continue
		}
		if (pgid > 0 && st.pgid == pgid) || (sid > 0 && st.sid == sid) {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

type groupStat struct {
	state     byte
	pgid, sid int
	start     uint64
}

// parseGroup reads the state, process group, session and start time
// (fields 3, 5, 6 and 22) of a /proc/<pid>/stat line.
func parseGroup(b []byte) (groupStat, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return groupStat{}, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 || len(f[0]) != 1 {
		return groupStat{}, false
	}
	var st groupStat
	var err1, err2, err3 error
	st.state = f[0][0]
	st.pgid, err1 = strconv.Atoi(f[2])
	st.sid, err2 = strconv.Atoi(f[3])
	st.start, err3 = strconv.ParseUint(f[19], 10, 64)
	return st, err1 == nil && err2 == nil && err3 == nil
}

// Command names pid's program for people: the base name of its argv[0]
// (never its arguments, which may hold a prompt), else its kernel name.
func Command(pid int) string {
	b, err := readSmall("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err == nil {
		if arg0, _, _ := bytes.Cut(b, []byte{0}); len(arg0) > 0 {
			return filepath.Base(string(arg0))
		}
	}
	b, err = readSmall("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return ""
	}
	return string(bytes.TrimSpace(b))
}

// LockHolders lists the processes that have the file at path open: for a
// lock file, those that hold or inherited its lock. Processes whose
// descriptors cannot be read are left out.
func LockHolders(path string) []int {
	var want unix.Stat_t
	if unix.Stat(path, &want) != nil {
		return nil
	}
	des, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, de := range des {
		pid, err := strconv.Atoi(de.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		dir := "/proc/" + de.Name() + "/fd"
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			var st unix.Stat_t
			if unix.Stat(dir+"/"+fd.Name(), &st) == nil && st.Ino == want.Ino && st.Dev == want.Dev {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// FlockHolder reads /proc/locks for a flock on the file of inode ino and
// returns the pid that holds it. Inodes are matched without the device:
// overlay filesystems report the device of the layer below, and a false
// "held" only errs on the safe side. Waiters ("->" lines) are skipped.
func FlockHolder(ino uint64) (pid int, held bool, err error) {
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		return 0, false, err
	}
	suffix := []byte(":" + strconv.FormatUint(ino, 10))
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		// 1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF
		f := bytes.Fields(sc.Bytes())
		if len(f) < 6 || string(f[1]) != "FLOCK" || !bytes.HasSuffix(f[5], suffix) {
			continue
		}
		pid, _ := strconv.Atoi(string(f[4]))
		return pid, true, nil
	}
	return 0, false, nil
}
