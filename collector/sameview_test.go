package collector

import (
	"reflect"
	"testing"
	"unsafe"
)

// A view is published again only when it differs from the one published
// in some field: sameView reads every field of tupleView.
func TestSameViewReadsEveryField(t *testing.T) {
	var a tupleView
	va := reflect.ValueOf(&a).Elem()
	differ := func(f reflect.Value) {
		f = reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
		switch f.Kind() {
		case reflect.Bool:
			f.SetBool(!f.Bool())
		case reflect.Int64, reflect.Int:
			f.SetInt(f.Int() + 1)
		case reflect.Uint8:
			f.SetUint(f.Uint() + 1)
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
		case reflect.Slice:
			f.Set(reflect.MakeSlice(f.Type(), 1, 1))
		default:
			t.Fatalf("field of kind %s: not one this test changes", f.Kind())
		}
	}
	for i := range va.NumField() {
		differ(va.Field(i)) // every field set
	}
	if b := a; !sameView(&a, &b) {
		t.Fatal("a copy of a view is not the same view")
	}
	for i := range va.NumField() {
		b := a
		differ(reflect.ValueOf(&b).Elem().Field(i))
		if sameView(&a, &b) {
			t.Errorf("views that differ in %s are the same view", va.Type().Field(i).Name)
		}
	}
}
