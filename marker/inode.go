package marker

import (
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/padrun/padrun/marker/ident"
	"github.com/padrun/padrun/marker/safefile"
)

// The hold follows the file, not only its name: beside F.live.lock, a
// held session file's own inode is flocked, through a descriptor opened
// for reading only (O_NOFOLLOW, O_NONBLOCK) and never written. A file
// renamed while held keeps that lock under its new name, where a second
// acquire, finding F.live.lock of the new name free, is still refused.
//
// flock conflicts between two opens of one inode even in one process, so
// the inodes this process holds are kept in one table: a second name of a
// file the run holds already (a hard link, the new name of a moved file)
// shares the lock instead of being refused by it.

// inodeLock is one flocked inode and how many locks share it.
type inodeLock struct {
	fd   int
	refs int
}

var inodes = struct {
	sync.Mutex
	m map[inodeKey]*inodeLock
}{m: map[inodeKey]*inodeLock{}}

// errNoInode says the file has no inode to hold: not there yet, not a
// regular file, not readable by this user, or on a filesystem without
// flock. Its name's lock holds it alone.
var errNoInode = errors.New("marker: no inode to hold")

// errInodeBusy says another process holds the file's inode.
var errInodeBusy = errors.New("marker: inode held")

// holdInode flocks the inode of the regular file at file, or shares this
// process's lock on it. errNoInode when there is none to hold, a
// *HeldError when another process holds it, an *UnsafeError for a symlink.
func holdInode(file string, self ident.Self) (inodeKey, error) {
	fd, key, err := openInode(file)
	if err == errSymlinkInode {
		return key, &UnsafeError{file, "is a symlink: padrun will not follow it"}
	}
	if err != nil {
		return key, err
	}
	inodes.Lock()
	defer inodes.Unlock()
	if l, ok := inodes.m[key]; ok {
		closeInode(fd)
		l.refs++
		return key, nil
	}
	switch err := lockInode(fd); err {
	case nil:
		inodes.m[key] = &inodeLock{fd: fd, refs: 1}
		return key, nil
	case errInodeBusy:
		closeInode(fd)
		return key, inodeHeld(file, key, self)
	default:
		closeInode(fd)
		return key, err
	}
}

// holdInodes is holdInode for acquire: the inodes taken, none when there
// is none to hold.
func holdInodes(file string, self ident.Self) ([]inodeKey, error) {
	key, err := holdInode(file, self)
	switch {
	case err == errNoInode:
		return nil, nil
	case err != nil:
		return nil, err
	}
	return []inodeKey{key}, nil
}

// withInodes gives l the inodes inos, or drops them when err says l was
// not taken.
func (l *Hold) withInodes(inos []inodeKey, err error) (*Hold, error) {
	if err != nil {
		dropInodes(inos)
		return nil, err
	}
	l.inodes = inos
	return l, nil
}

func dropInodes(keys []inodeKey) {
	for _, k := range keys {
		dropInode(k)
	}
}

// dropInode releases one share of the lock on key; the last closes it.
func dropInode(key inodeKey) {
	inodes.Lock()
	defer inodes.Unlock()
	l, ok := inodes.m[key]
	if !ok {
		return
	}
	if l.refs--; l.refs == 0 {
		closeInode(l.fd)
		delete(inodes.m, key)
	}
}

// inodeFd is the descriptor that holds key, or -1.
func inodeFd(key inodeKey) int {
	inodes.Lock()
	defer inodes.Unlock()
	if l, ok := inodes.m[key]; ok {
		return l.fd
	}
	return -1
}

// inodeHeld is the refusal for a file whose inode another process holds:
// a session holds it, under this name or another. Its holder's marker is
// found through the holder's open lock file, where the system shows it.
func inodeHeld(file string, key inodeKey, self ident.Self) *HeldError {
	m, at, pid := inodeHolder(file, key)
	named := thisName
	switch {
	case m == nil || at == file:
	case sameInode(at, key):
		named = hardLink
	default:
		named = moved
	}
	return &HeldError{File: file, Kind: HeldPolled, Holder: m, Judgement: inodeHeldOf(m, at, named, pid)}
}

// LockInode takes the inode of the file now at l.File, when there is one
// and l does not hold it yet: a session file created after the acquire,
// or put in place of the one held; took says it did. A *HeldError says
// another session holds that inode: the run's child would write a file
// another session holds.
func (l *Hold) LockInode(self ident.Self) (took bool, err error) {
	if l.NoFlock {
		return false, nil
	}
	fd, key, err := openInode(l.File)
	if err != nil {
		return false, nil // nothing to hold, or not safely: the name's lock holds it
	}
	closeInode(fd)
	if slices.Contains(l.inodes, key) {
		return false, nil
	}
	key, err = holdInode(l.File, self)
	switch {
	case err == errNoInode:
		return false, nil
	case err != nil:
		return false, err
	}
	l.inodes = append(l.inodes, key)
	return true, nil
}

// InodeFds are the descriptors that hold l's inodes, for the child to
// inherit as it inherits Fd's.
func (l *Hold) InodeFds() []uintptr {
	var fds []uintptr
	for _, k := range l.inodes {
		if fd := inodeFd(k); fd >= 0 {
			fds = append(fds, uintptr(fd))
		}
	}
	return fds
}

// Names says where l's files are now, from its open descriptors: the
// session file that its lock file names (moved with its folder, it names
// the folder's new place), and the current names of the inodes it holds.
// A name is "" where the system cannot say, where the file was deleted, or
// where the name does not name that file (any more); file is l.File while
// that still names its lock.
func (l *Hold) Names() (file string, inodeNames []string) {
	file = l.File
	if p, ok := fdPath(int(safefile.Fd(l.g.h))); ok && !safefile.SameFile(l.g.h, lockPath(l.File)) {
		file = strings.TrimSuffix(p, lockSuffix)
		if file == p || !safefile.SameFile(l.g.h, p) {
			file = ""
		}
	}
	for _, k := range l.inodes {
		name := ""
		if fd := inodeFd(k); fd >= 0 {
			if p, ok := fdPath(fd); ok && sameInode(p, k) {
				name = p
			}
		}
		inodeNames = append(inodeNames, name)
	}
	return file, inodeNames
}

// MoveTo records that l's lock file and marker are now those of file (its
// folder was renamed): the marker is rewritten to name it.
func (l *Hold) MoveTo(file string) error {
	l.File = file
	l.marker.SessionFile = file
	return l.republish()
}

// Deleted says, once each, which of the session file inodes l holds have
// lost their last name while held (an rm, a harness's own cleanup): a
// path their contents stay readable at until l is released, or "" where
// the system shows none.
func (l *Hold) Deleted() []string {
	var out []string
	for _, k := range l.inodes {
		fd := inodeFd(k)
		if fd < 0 || slices.Contains(l.deleted, k) || !inodeUnlinked(fd) {
			continue
		}
		l.deleted = append(l.deleted, k)
		out = append(out, fdContents(fd))
	}
	return out
}

// Gone reports whether l's lock file was removed while held (its folder
// deleted, say): its name is no longer held.
func (l *Hold) Gone() bool { return unlinked(l.g.h) }

// Inode reports whether l holds its session file's own inode.
func (l *Hold) Inode() bool { return len(l.inodes) > 0 }

// releaseInodes drops l's shares of its inodes' locks.
func (l *Hold) releaseInodes() {
	dropInodes(l.inodes)
	l.inodes = nil
}

const lockSuffix = ".live.lock"
