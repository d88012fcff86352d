package config

import (
	"net/url"
	"testing"
)

func TestValuesAsURLValues(t *testing.T) {
	v := MakeValues("window", "day", "exchange", "a b&c", "limit", "5", "asset", "é/x", "window", "hour")
	want := url.Values{"window": {"hour"}, "exchange": {"a b&c"}, "limit": {"5"}, "asset": {"é/x"}}
	if got := v.Encode(); got != want.Encode() {
		t.Errorf("Encode: %q, want %q", got, want.Encode())
	}
	if v.Len() != 4 || v.Get("window") != "hour" || v.Get("nothing") != "" || !v.Has("limit") || v.Has("nothing") {
		t.Errorf("Len %d, Get(window) %q, Has(limit) %v", v.Len(), v.Get("window"), v.Has("limit"))
	}
	if got := v.URL(); got.Encode() != want.Encode() {
		t.Errorf("URL: %v, want %v", got, want)
	}
	var names []string
	for k := range v.All() {
		names = append(names, k)
	}
	if len(names) != 4 || names[0] != "asset" || names[3] != "window" {
		t.Errorf("All: %v, want the names sorted", names)
	}
	if (Values{}).Encode() != "" || (Values{}).Len() != 0 {
		t.Error("the zero Values is not empty")
	}
}
