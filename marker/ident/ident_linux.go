package ident

import (
	"bytes"
	"errors"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// readStart reads a pid's stat file alone: its start time and state.
func readStart(pid int) (procState, error) {
	path := "/proc/" + strconv.Itoa(pid) + "/stat"
	b, err := readSmall(path)
	if err != nil {
		return procState{}, err
	}
	state, start, ok := parseStat(b)
	if !ok {
		return procState{}, errors.New("ident: malformed " + path)
	}
	return procState{start: start, zombie: state == 'Z' || state == 'X', process: true}, nil
}

// readProc reads what Probe needs: the stat file, and the status file for
// the thread-group id.
func readProc(pid int) (procState, error) {
	st, err := readStart(pid)
	if err != nil {
		return st, err
	}
	if b, err := readSmall("/proc/" + strconv.Itoa(pid) + "/status"); err == nil {
		if tgid, ok := statusField(b, "Tgid:"); ok && tgid != strconv.Itoa(pid) {
			st.process = false
		}
	}
	return st, nil
}

func bootID() string {
	b, _ := readSmall("/proc/sys/kernel/random/boot_id") // Best effort: left out when unreadable.
	return string(bytes.TrimSpace(b))
}

func machineID() string {
	for _, p := range []string{"/etc/machine-id", "/var/lib/dbus/machine-id"} {
		if b, err := readSmall(p); err == nil {
			if id := string(bytes.TrimSpace(b)); id != "" {
				return id
			}
		}
	}
	return ""
}

func pidNamespace() string { return namespace("pid") }

// timeNamespace names the time namespace this process reads clocks in: a
// start time in /proc/<pid>/stat is shifted by its boottime offset.
func timeNamespace() string { return namespace("time") }

// namespace returns the inode of /proc/self/ns/<kind>, or "" where the
// kernel has none (time namespaces came in Linux 5.6).
func namespace(kind string) string {
	var st unix.Stat_t
	if err := unix.Stat("/proc/self/ns/"+kind, &st); err != nil {
		return ""
	}
	return strconv.FormatUint(st.Ino, 10)
}

// statusField returns the value of a "Key:\tvalue" line of a status file.
func statusField(b []byte, key string) (string, bool) {
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if v, ok := bytes.CutPrefix(line, []byte(key)); ok {
			return string(bytes.TrimSpace(v)), true
		}
	}
	return "", false
}

// readSmall reads a small kernel file with one open and one read: /proc
// files are generated whole on the first read.
func readSmall(path string) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	buf := make([]byte, 4096)
	n, err := unix.Read(fd, buf)
	if err != nil {
		return nil, err
	}
	return buf[:n], nil
}

// ParentPid returns the parent pid of pid, from its stat file (Linux only).
func ParentPid(pid int) (int, error) {
	path := "/proc/" + strconv.Itoa(pid) + "/stat"
	b, err := readSmall(path)
	if err != nil {
		return 0, err
	}
	f, ok := statFields(b)
	if !ok || len(f) < 2 {
		return 0, errors.New("ident: malformed " + path)
	}
	return strconv.Atoi(f[1])
}

// parseStat reads the state and start time (fields 3 and 22) of a Linux
// /proc/<pid>/stat line.
func parseStat(b []byte) (state byte, start string, ok bool) {
	f, ok := statFields(b)
	if !ok || len(f) < 20 || len(f[0]) != 1 {
		return 0, "", false
	}
	if _, err := strconv.ParseUint(f[19], 10, 64); err != nil {
		return 0, "", false
	}
	return f[0][0], f[19], true
}

// statFields returns the fields of a /proc/<pid>/stat line from field 3 (the
// state) on. The command name (field 2) may hold spaces and ')', so fields
// are counted after the last ')'.
func statFields(b []byte) ([]string, bool) {
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, false
	}
	return strings.Fields(s[i+1:]), true
}
