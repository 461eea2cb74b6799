//go:build windows || dragonfly || netbsd || openbsd

package wrapper

// shimsHere: no control folder here (control_none.go), so no folder of
// harness entries: harnesses started inside a session are seen only at
// their own start (docs/spec.md §5, rule 9).
const shimsHere = false
