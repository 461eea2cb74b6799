package harness

import (
	"io"
	"strings"

	"github.com/padrun/padrun/wrapper/control"
)

// hookVerb opens every CompanionSpec.Hook: the harness's hooks run
// `padrun companion SIDE [ARG...]`, and SIDE names the adapter whose
// RunHook answers them.
const hookVerb = "companion "

// HookCall is one run of a companion's hook side, inside the harness's
// process tree: the harness whose hook runs it, the words its hook gives
// after the side (gemini's EVENT), the hook's input and output, and the
// way to the session's padrun (from the hook's environment).
type HookCall struct {
	Harness        string
	Args           []string
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Control        control.Client
}

// HookSide is padrun's side of a companion's hooks: what
// `padrun companion Side ARG...` runs. It returns the hook's exit status.
type HookSide struct {
	Harness string
	Side    string   // the word after `padrun companion`
	Args    []string // what the harness's hook gives after Side, for people: EVENT
	run     func(HookCall) int
}

// Run runs the side for a hook call; call.Harness and call.Args are set
// from the side and args.
func (h HookSide) Run(args []string, call HookCall) int {
	call.Harness, call.Args = h.Harness, args
	return h.run(call)
}

// Usage is the side as its hook runs it: "gemini-hook EVENT".
func (h HookSide) Usage() string {
	return strings.Join(append([]string{h.Side}, h.Args...), " ")
}

// HookSides lists the hook sides of every companion that runs padrun
// again, in declared order.
func HookSides() []HookSide {
	var out []HookSide
	for _, a := range adapters {
		if c := a.Companion; c != nil && c.Hook != "" {
			out = append(out, HookSide{Harness: a.Name, Side: strings.TrimPrefix(c.Hook, hookVerb), Args: c.HookArgs, run: c.runHook})
		}
	}
	return out
}

// FindHook returns the hook side that `padrun companion args...` runs,
// and the words after the side; ok is false when no companion's hook runs
// such a line (an unknown side, or the wrong count of words after it).
func FindHook(args []string) (h HookSide, rest []string, ok bool) {
	if len(args) == 0 {
		return HookSide{}, nil, false
	}
	for _, h := range HookSides() {
		if h.Side == args[0] && len(args)-1 == len(h.Args) {
			return h, args[1:], true
		}
	}
	return HookSide{}, nil, false
}
