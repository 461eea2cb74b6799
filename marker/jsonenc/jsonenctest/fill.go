// Package jsonenctest fills a value of a fixed-shape record for the tests of
// its encoder: a field the encoder does not write is then a field that does
// not survive the round trip, where a hand-written literal would leave it
// zero, omitted on both sides, and unnoticed.
package jsonenctest

import (
	"fmt"
	"reflect"
)

// Fill sets every exported field of the struct *p, and of the structs it
// points to, to a value that is not zero and differs from field to field:
// strings name their field, numbers count, bools are true, slices hold one
// element. It panics on a field kind it does not know, so that a new kind is
// filled rather than skipped.
func Fill(p any) {
	n := 0
	fill(reflect.ValueOf(p).Elem(), "", &n)
}

func fill(v reflect.Value, name string, n *int) {
	*n++
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("%s-%d", name, *n))
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(int64(*n))
	case reflect.Uint, reflect.Uint64, reflect.Uint32:
		v.SetUint(uint64(*n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), name, n)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), name, n)
	case reflect.Struct:
		filled := false
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() && f.Tag.Get("json") != "-" {
				fill(v.Field(i), f.Name, n)
				filled = true
			}
		}
		if !filled { // a time.Time, say: its fields are its own
			panic(fmt.Sprintf("jsonenctest: %s: cannot fill a %s", name, v.Type()))
		}
	default:
		panic(fmt.Sprintf("jsonenctest: %s: cannot fill a %s", name, v.Kind()))
	}
}

// Unset names the exported fields of the struct v, and of the structs it
// points to, that are zero: after Fill, none; a test reports them, so that
// it cannot pass by filling nothing.
func Unset(v any) []string {
	var out []string
	unset(reflect.ValueOf(v), "", &out)
	return out
}

func unset(v reflect.Value, name string, out *[]string) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			*out = append(*out, name)
			return
		}
		unset(v.Elem(), name, out)
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() && f.Tag.Get("json") != "-" {
				unset(v.Field(i), name+"."+f.Name, out)
			}
		}
	default:
		if v.IsZero() {
			*out = append(*out, name)
		}
	}
}
