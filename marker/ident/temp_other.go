//go:build !linux

package ident

// tempNamespaces: only Linux has namespaces that change what a pid or a
// start time means.
func tempNamespaces() string { return "" }
