package wrapper

import (
	"os"
	"testing"

	"github.com/padrun/padrun/marker"
	"github.com/padrun/padrun/marker/ident"
	"github.com/padrun/padrun/registry"
)

// TestPid_LadderAndRegistryAgree: the ladder and the registry judge a pid
// by the same rule (docs/spec.md §5, rung 5). 4294967297 is pid 1 to kill(2)
// and a negative pid a process group: both are dead, never probed; before,
// the ladder said alive and the registry dead.
func TestPid_LadderAndRegistryAgree(t *testing.T) {
	for _, c := range []struct {
		pid  int
		want ident.Verdict
	}{
		{1<<32 + 1, ident.Dead}, {1<<31 + 1, ident.Dead}, {-1, ident.Dead}, {-os.Getpid(), ident.Dead},
		{os.Getpid(), ident.Alive},
	} {
		token := ""
		if c.pid == os.Getpid() {
			token, _ = ident.StartToken(c.pid)
		}
		ladder := marker.Local(c.pid, token)
		reg, why := registry.OwnerLiveness(registry.Owner{PID: c.pid, ProcStart: token})
		if ladder.Verdict != c.want || reg != c.want {
			t.Errorf("pid %d: ladder %v (%s), registry %v (%s); want both %v", c.pid, ladder.Verdict, ladder.Reason, reg, why, c.want)
		}
	}
}
