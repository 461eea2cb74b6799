package harness

import (
	"strings"
	"testing"
)

// TestHookSides_Declared: every companion hook is `companion SIDE`, a
// side of one harness only, answered by its adapter's function; words
// after the side only with a hook.
func TestHookSides_Declared(t *testing.T) {
	seen := map[string]string{}
	for _, a := range adapters {
		c := a.Companion
		if c == nil {
			continue
		}
		if c.Hook == "" {
			if c.runHook != nil || c.HookArgs != nil {
				t.Errorf("%s: a hook side without a hook", a.Name)
			}
			continue
		}
		side, ok := strings.CutPrefix(c.Hook, hookVerb)
		if !ok || side == "" || strings.ContainsAny(side, " \t") || c.runHook == nil {
			t.Errorf("%s: hook %q (answered: %v): want %q and the function that answers it", a.Name, c.Hook, c.runHook != nil, hookVerb+"SIDE")
		}
		if other, dup := seen[side]; dup {
			t.Errorf("%s: side %q is %s's too", a.Name, side, other)
		}
		seen[side] = a.Name
	}
	for _, h := range HookSides() {
		args := append([]string{h.Side}, h.Args...)
		if got, rest, ok := FindHook(args); !ok || got.Harness != h.Harness || len(rest) != len(h.Args) {
			t.Errorf("FindHook(%q) = %s %q %v, want %s", args, got.Harness, rest, ok, h.Harness)
		}
		if _, _, ok := FindHook(args[:len(args)-1]); ok && len(h.Args) > 0 {
			t.Errorf("FindHook(%q) without its %q found a side", args[:len(args)-1], h.Args)
		}
		if _, _, ok := FindHook(append(args, "x")); ok {
			t.Errorf("FindHook(%q) with a word more found a side", args)
		}
	}
	if _, _, ok := FindHook(nil); ok {
		t.Error("FindHook() found a side")
	}
}
