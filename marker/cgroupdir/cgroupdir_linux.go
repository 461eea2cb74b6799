package cgroupdir

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// magic is CGROUP2_SUPER_MAGIC, the f_type of a cgroup v2 filesystem.
const magic = 0x63677270

// maxDepth bounds the walk of a recorded cgroup: nested padruns make one
// level each.
const maxDepth = 16

// Procs lists the processes in the cgroup v2 folder dir and below it. A
// folder that no longer exists holds none; one that is not on a cgroup v2
// filesystem is an error, as nothing can be proven from it.
func Procs(dir string) ([]int, error) {
	var fs unix.Statfs_t
	switch err := unix.Statfs(dir, &fs); {
	case errors.Is(err, unix.ENOENT):
		return nil, nil
	case err != nil:
		return nil, errors.New("cgroup: " + dir + ": " + err.Error())
	case fs.Type != magic:
		return nil, errors.New("cgroup: " + dir + " is not a cgroup v2 folder")
	}
	var pids []int
	err := walk(dir, 0, &pids)
	return pids, err
}

func walk(dir string, depth int, pids *[]int) error {
	if depth > maxDepth {
		return errors.New("cgroup: " + dir + " is nested too deep to check")
	}
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil // removed meanwhile: empty
	case err != nil:
		return errors.New("cgroup: " + dir + ": " + err.Error())
	}
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			*pids = append(*pids, pid)
		}
	}
	des, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return errors.New("cgroup: " + dir + ": " + err.Error())
	}
	for _, de := range des {
		if de.IsDir() {
			if err := walk(filepath.Join(dir, de.Name()), depth+1, pids); err != nil {
				return err
			}
		}
	}
	return nil
}

// IsV2 reports whether dir is a folder on a cgroup v2 filesystem.
func IsV2(dir string) bool {
	var fs unix.Statfs_t
	return unix.Statfs(dir, &fs) == nil && fs.Type == magic
}

// removeTries bounds the wait for an empty cgroup that the kernel still
// counts a process in: right after its last process exited (a zombie not
// yet reaped, an exit not yet accounted), rmdir says EBUSY for a moment.
const removeTries = 50

// RemoveWhenEmpty removes the cgroup folder dir once no process lives in it,
// trying briefly while the kernel still counts one that no cgroup.procs
// lists; settle, when set, runs between the tries. It reports whether dir
// is gone.
func RemoveWhenEmpty(dir string, settle func()) bool {
	for try := 0; ; try++ {
		switch err := unix.Rmdir(dir); err {
		case nil, unix.ENOENT:
			return true
		case unix.EBUSY:
		default:
			return false
		}
		if try == removeTries {
			return false
		}
		if pids, err := Procs(dir); err != nil || len(pids) > 0 {
			return false // a live process, or one cgroup made inside it
		}
		if settle != nil {
			settle()
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// RemoveLeftover removes the empty cgroup dir that a killed padrun left
// behind, named in its marker. It touches only folders named as padrun
// names them, on a cgroup v2 filesystem.
func RemoveLeftover(dir string) {
	if !strings.HasPrefix(filepath.Base(dir), Prefix) || !IsV2(dir) {
		return
	}
	// Its last process may be a zombie that init has yet to reap: the
	// kernel still counts it, though it lists no process.
	RemoveWhenEmpty(dir, nil) // Best effort: removed, or a nested one keeps it.
}
