//go:build !linux

package wrapper

// terminal names the terminal padrun runs on; where /proc does not say,
// none is named.
func terminal() string { return "" }
