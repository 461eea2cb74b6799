package wrapper

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/padrun/padrun/supervise"
)

// interrupted is the cause of a wait that a signal ended.
type interrupted struct{ sig syscall.Signal }

func (e *interrupted) Error() string { return "interrupted by " + e.sig.String() }

// signalContext is cancelled, with the signal as its cause, when a signal
// that aborts a run arrives (TERM, HUP, INT, QUIT and those handled like
// TERM), so that a wait for the registry's lock ends with the run. Signals
// ignored at start stay ignored. stop releases it.
func signalContext() (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	c := make(chan os.Signal, 1)
	for _, s := range supervise.Abort {
		if !signal.Ignored(s) {
			signal.Notify(c, s)
		}
	}
	done := make(chan struct{})
	go func() {
		select {
		case s := <-c:
			cancel(&interrupted{s.(syscall.Signal)})
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(c)
		close(done)
		cancel(nil)
	}
}
