package marker

import (
	"errors"

	"github.com/padrun/padrun/marker/safefile"
)

// inodeKey names an inode; Windows holds none (openInode).
type inodeKey struct{}

var errSymlinkInode = errors.New("marker: session file is a symlink")

// openInode: the session file's own inode is not held here; its name's
// lock holds it alone.
func openInode(string) (int, inodeKey, error) { return -1, inodeKey{}, errNoInode }

func lockInode(int) error { return errNoInode }

func closeInode(int) {}

func sameInode(string, inodeKey) bool { return false }

func unlinked(safefile.Handle) bool { return false }

func inodeUnlinked(int) bool { return false }
