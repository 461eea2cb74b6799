package marker

// HiddenMarkers is hiddenMarkers, for the external test that compares it
// with the harness adapters' (marker imports no harness; its test may).
var HiddenMarkers = hiddenMarkers
