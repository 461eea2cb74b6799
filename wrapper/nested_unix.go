//go:build linux || darwin || freebsd

package wrapper

// shimsHere: the folder of harness entries lives in the control folder.
const shimsHere = true
