//go:build !linux

package wrapper

import "github.com/padrun/padrun/wrapper/harness"

// leasesWork: no file leases padrun uses here.
const leasesWork = false

// startLeases: see lease_linux.go; nothing here.
func (s *session) startLeases([]harness.Watch) (stop func()) { return func() {} }
