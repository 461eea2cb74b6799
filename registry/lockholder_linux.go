package registry

import (
	"bufio"
	"bytes"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/padrun/padrun/marker/safefile"
)

// lockHolder names the process that holds a flock on the open file h, from
// /proc/locks: "pid 1234 (flock)", or "" when it cannot be seen. Inodes are
// matched without the device: overlay filesystems report the device of the
// layer below.
func lockHolder(h safefile.Handle) string {
	var st unix.Stat_t
	if unix.Fstat(h, &st) != nil {
		return ""
	}
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		return ""
	}
	ino := []byte(":" + strconv.FormatUint(st.Ino, 10))
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		// 1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF; waiters have "->" in field 2.
		f := bytes.Fields(sc.Bytes())
		if len(f) < 6 || string(f[1]) != "FLOCK" || !bytes.HasSuffix(f[5], ino) {
			continue
		}
		pid, err := strconv.Atoi(string(f[4]))
		if err != nil || pid <= 0 {
			continue
		}
		return "pid " + string(f[4]) + " (" + command(pid) + ")"
	}
	return ""
}

// command is pid's command name, or why it has none.
func command(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return "gone: the lock lives on in a descriptor it passed on"
	}
	return string(bytes.TrimSpace(b))
}
