package marker

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// hasWaiters reports whether /proc/locks shows a process blocked on the
// flock of the file open as fd.
func hasWaiters(fd int) bool {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		return false
	}
	ino := []byte(":" + strconv.FormatUint(st.Ino, 10))
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		// 1: -> FLOCK  ADVISORY  WRITE 1235 fd:01:5678 0 EOF
		f := bytes.Fields(sc.Bytes())
		if len(f) >= 7 && string(f[1]) == "->" && string(f[2]) == "FLOCK" && bytes.HasSuffix(f[6], ino) {
			return true
		}
	}
	return false
}

// lockHolder reads /proc/locks for a flock on the lock file. Inodes are
// matched without the device: overlay filesystems report the device of the
// layer below, and a false "held" only errs on the safe side.
func lockHolder(path string) (held bool, pid int, err error) {
	var st unix.Stat_t
	switch err := unix.Lstat(path, &st); {
	case err == unix.ENOENT:
		return false, 0, nil
	case err != nil:
		return false, 0, err
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return false, 0, errors.New(path + " is not a regular file")
	}
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		return false, 0, err
	}
	ino := []byte(":" + strconv.FormatUint(st.Ino, 10))
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		// 1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF
		f := bytes.Fields(sc.Bytes())
		if len(f) < 6 || string(f[1]) != "FLOCK" || !bytes.HasSuffix(f[5], ino) {
			continue
		}
		pid, _ := strconv.Atoi(string(f[4]))
		return true, pid, nil
	}
	return false, 0, nil
}
