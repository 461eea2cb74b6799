package marker

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/padrun/padrun/marker/jsonenc/jsonenctest"
)

// TestEncode_EveryField_RoundTrips: a marker with every exported field set
// is written by the encoder as json.Marshal writes it and parses back equal,
// so a field added to Marker and not to encode fails here.
func TestEncode_EveryField_RoundTrips(t *testing.T) {
	var m Marker
	jsonenctest.Fill(&m)
	if zero := jsonenctest.Unset(m); len(zero) > 0 {
		t.Fatalf("fields left zero: %v", zero)
	}
	b := m.encode()
	if want, _ := json.Marshal(m); string(b) != string(want) {
		t.Errorf("encode:\n%s\njson.Marshal:\n%s", b, want)
	}
	got, err := parse(b)
	if err != nil {
		t.Fatalf("Parse(%s): %v", b, err)
	}
	if !reflect.DeepEqual(*got, m) {
		t.Errorf("round trip:\n got %+v\nwant %+v", *got, m)
	}
}
