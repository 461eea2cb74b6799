package wrapper

import "io/fs"

// owner is a file's owner: Windows gives no uid.
func owner(fs.FileInfo) (uid int, ok bool) { return -1, false }
