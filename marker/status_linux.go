package marker

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

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
