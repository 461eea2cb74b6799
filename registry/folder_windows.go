package registry

import "os"

// checkFolder has no owner or mode bits to check here: access is the ACL's.
func checkFolder(string, os.FileInfo, bool, bool) error { return nil }
