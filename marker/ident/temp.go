package ident

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// The frame of every temp name: a leading dot and this prefix, so that it
// never matches a marker's *.live.json nor a record's ^[0-9]+\.json$.
const (
	tempPrefix = ".padrun-"
	tempSuffix = ".tmp"
)

// writer is this process as its temp names carry it (without a start
// token the pid alone is judged).
var writer = sync.OnceValues(func() (string, string) {
	s := ReadSelf()
	return string(s.StartToken), place(s.BootID, s.MachineID, string(s.PidNamespace)+" "+string(s.TimeNamespace))
})

// place tags the boot, machine and namespaces a pid and start time are
// read in: equal tags, and only those, let one process judge another's pid.
// Without a boot id nothing proves two processes share a machine: "".
func place(boot, machine, namespaces string) string {
	if boot == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(NormalizeID(boot) + "\n" + NormalizeID(machine) + "\n" + namespaces))
	return hex.EncodeToString(sum[:6])
}

// TempName is a fresh name for a file this process writes before it moves
// it into place: .padrun-<pid>-<start token>-<place>-<random>.tmp, about
// 60 characters, whatever the name it replaces. It carries its writer, so that a file left by a writer
// killed before the move can be proven dead (tempDead) and removed.
func TempName() string { return TaggedName(tempPrefix, tempSuffix) }

// TaggedName is a fresh name that carries this process as TempName's do:
// prefix, then <pid>-<start token>-<place>-<random>, then suffix. A thing
// so named that its writer left behind is proven left by TaggedDead.
func TaggedName(prefix, suffix string) string {
	token, where := writer()
	u := rand.Uint32() // a clash fails the exclusive create
	b := [4]byte{byte(u >> 24), byte(u >> 16), byte(u >> 8), byte(u)}
	return prefix + strconv.Itoa(os.Getpid()) + "-" + token + "-" + where + "-" + hex.EncodeToString(b[:]) + suffix
}

// tempDead reports whether name is a TempName whose writer is proven gone:
// written in this boot, on this machine and in these namespaces (its place
// is ours), by a pid that is gone, reused or a zombie. Any other name, and
// a writer that is alive or cannot be checked from here, is not.
func tempDead(name string) bool { return TaggedDead(tempPrefix, tempSuffix, name) }

// TaggedDead reports whether name is a TaggedName(prefix, suffix) whose
// writer is proven gone, by tempDead's rules.
func TaggedDead(prefix, suffix, name string) bool {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return false
	}
	if rest, ok = strings.CutSuffix(rest, suffix); !ok {
		return false
	}
	f := strings.Split(rest, "-")
	_, here := writer()
	if len(f) != 4 || here == "" || f[2] != here || !digits(f[0]) || (f[1] != "" && !digits(f[1])) {
		return false
	}
	pid, err := strconv.Atoi(f[0])
	if err != nil || pid <= 0 {
		return false
	}
	found, err := Probe(pid, f[1])
	return err == nil && found.Verdict == Dead
}

func digits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// ReclaimTemps removes the temp files in dir that tempDead proves left by
// a dead writer (one SIGKILLed between writing a marker or record and
// moving it into place), regular files only, and returns how many went.
// Best effort: a folder that cannot be read reclaims nothing.
func ReclaimTemps(dir string) int {
	d, err := os.Open(dir)
	if err != nil {
		return 0
	}
	names, _ := d.Readdirnames(-1) // Best effort: what was read is judged.
	d.Close()
	n := 0
	for _, name := range names {
		if !strings.HasPrefix(name, tempPrefix) || !tempDead(name) {
			continue
		}
		path := filepath.Join(dir, name)
		if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if err := os.Remove(path); err == nil || errors.Is(err, os.ErrNotExist) {
			n++
		}
	}
	return n
}
