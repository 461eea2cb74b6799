// Package retire destroys padrun's inotify instances after padrun has
// gone, so that its exit never waits for the kernel (retire_unix.go).
package retire

// Name is the name padrun runs itself under to end retired instances:
// it exits at once, and its exit destroys them.
const Name = "padrun-retire"
