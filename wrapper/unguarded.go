package wrapper

import (
	"path/filepath"

	"github.com/padrun/padrun/wrapper/harness"
)

// unguarded warns once when the run guards no file at all (no adapter, no
// --guard), and refuses it under --strict: padrun would protect nothing.
func unguarded(o Options, plan harness.Plan, files []string) error {
	if plan.Harness != harness.None || len(files) > 0 {
		return nil
	}
	if o.Strict {
		return usagef("this run guards no session file (no --guard, and %s is not a known harness) and --strict is set", filepath.Base(plan.Argv[0]))
	}
	o.Log.Warn().Msg("this run guards no session file: name it with --guard PATH (or --harness " + harness.List(harness.Names(), "or") + ")")
	return nil
}
