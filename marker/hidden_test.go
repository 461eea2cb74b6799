package marker_test

import (
	"slices"
	"testing"

	"github.com/padrun/padrun/marker"
	"github.com/padrun/padrun/wrapper/harness"
)

// TestHiddenMarkers_AreTheAdapters: the session files whose markers marker
// hides are the ones the harness adapters declare (HiddenMarkers), no more
// and no fewer.
func TestHiddenMarkers_AreTheAdapters(t *testing.T) {
	var want []string
	for _, name := range append(harness.Names(), harness.None) {
		a, _ := harness.Lookup(name)
		want = append(want, a.HiddenMarkers...)
	}
	slices.Sort(want)
	want = slices.Compact(want)
	got := slices.Sorted(slices.Values(marker.HiddenMarkers))
	if !slices.Equal(got, want) {
		t.Errorf("marker hides the markers of %q, the adapters declare %q", got, want)
	}
}
