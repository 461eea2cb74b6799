// Package watch follows a harness's session folders for new session files
// and judges whose each one is: the run's only when padrun can prove that
// its own process tree writes it (docs/spec.md §4.4, "Whose file is it"). It reports
// what it finds through Events; what the run does with a file is the run's.
package watch

// Events is what the folder watcher reports to the run.
type Events struct {
	Claim   func(path string)      // a new session file that the run's own tree writes
	Unowned func(path, why string) // a new session file not proven the run's
	Wrote   func(path string)      // a session file in a watched folder was written
	// Overflow: the kernel's queue of events overflowed, and events were
	// lost; every watched folder (these roots, and the folders below them)
	// was rescanned for what they would have shown. Nil: not told.
	Overflow func(roots []string)
}

// WhyForeign is the reason given for a file another process writes.
const WhyForeign = "another process writes it"
