package wrapper

import (
	"slices"
	"sync"

	"github.com/rs/zerolog"

	"github.com/padrun/padrun/wrapper/harness"
)

// reminders keeps the warnings said before the child starts (docs/spec.md
// §8): an interactive harness on a terminal draws its screen over them at
// once, so they are said again, once, after it has ended and the terminal
// is restored.
type reminders struct {
	mu   sync.Mutex
	done bool // the child has started: nothing more is kept
	msgs []string
}

// Run keeps a warning said before the child starts (a zerolog.Hook).
func (r *reminders) Run(_ *zerolog.Event, level zerolog.Level, msg string) {
	if level != zerolog.WarnLevel {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.done && !slices.Contains(r.msgs, msg) {
		r.msgs = append(r.msgs, msg)
	}
}

// started stops keeping warnings: the child has started.
func (r *reminders) started() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done = true
}

// repeat returns what says the kept warnings again once an interactive
// harness on a terminal has ended.
func (r *reminders) repeat(o Options, plan harness.Plan) func() {
	r.started()
	if plan.Mode != harness.ModeInteractive || !isTerminal(o.Stderr) {
		return func() {}
	}
	return func() {
		r.mu.Lock()
		msgs := slices.Clone(r.msgs)
		r.mu.Unlock()
		for _, m := range msgs {
			o.Log.Warn().Msg(m)
		}
	}
}
