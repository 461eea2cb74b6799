package registry

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/padrun/padrun/marker/jsonenc/jsonenctest"
)

// TestEncode_EveryField_RoundTrips: a record with every exported field set,
// padrun's object included, is written by the encoder as json.MarshalIndent
// writes it and is listed back equal, so a field added to Record or Padrun
// and not to encode (or to the reader's copy of the fields) fails here.
func TestEncode_EveryField_RoundTrips(t *testing.T) {
	var rec Record
	jsonenctest.Fill(&rec)
	rec.RegisteredAt = "2026-11-30T08:00:00Z" // the reader lists only RFC 3339
	if zero := jsonenctest.Unset(rec); len(zero) > 0 {
		t.Fatalf("fields left zero: %v", zero)
	}
	b := rec.encode()
	if want, _ := json.MarshalIndent(&rec, "", "  "); string(b) != string(want) {
		t.Errorf("encode:\n%s\njson.MarshalIndent:\n%s", b, want)
	}
	path := filepath.Join(t.TempDir(), "999999999.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	e, ok := load(path)
	if !ok || e.Malformed {
		t.Fatalf("load(%s) = %+v, %v", b, e, ok)
	}
	if !reflect.DeepEqual(e.Record, rec) {
		t.Errorf("round trip:\n got %+v %+v\nwant %+v %+v", e.Record, e.Padrun, rec, rec.Padrun)
	}
}
