package harness

import "slices"

// Companion names the companion a run of this harness can load (SPEC 4.5):
// "pi" or "claude"; empty when the harness has none or the run opens no
// session (help, package commands).
func Companion(p Plan) string {
	switch {
	case p.Harness == "pi" && len(p.Argv) > 0 && !parsePi(p.Argv).info:
		return "pi"
	}
	return ""
}

// WithPiCompanion returns pi's argv with the extension at path loaded
// first: explicit -e paths load even under --no-extensions.
func WithPiCompanion(argv []string, path string) []string {
	return slices.Concat(argv[:1], []string{"-e", path}, argv[1:])
}
