// Package cgroupdir reads and removes the cgroup v2 folders of padrun's
// sessions: the processes in the cgroup a marker names, which the verdict
// ladder judges, and the empty one a dead padrun left, which a taker
// removes. supervise/cgroup, which makes them, reads them through it too.
// It imports none of padrun's packages, so marker need not import
// supervise.
package cgroupdir

// Prefix starts the name of every session cgroup: padrun touches no other.
const Prefix = "padrun-"
