package schedule

import "testing"

// TestKeyReadsBack: a key parses back to itself, an own estimate's name
// to its key and series; what is not a key is refused.
func TestKeyReadsBack(t *testing.T) {
	for _, k := range []Key{
		NewKey("data", "/v1/btc/market-data/open-interest", "hour", "ignored"),
		NewKey("data", "/v1/btc/network-data/supply", "block", ""),
		NewKey("consensus", "/consensus", "", "consensus /consensus?asset=bitcoin&days=7"),
	} {
		got, own, err := ParseKey(ownKey(k.String(), "s 1"))
		if err != nil || got != k || own != "s 1" {
			t.Errorf("%q read back as %+v, own %q (%v)", k, got, own, err)
		}
		if k.Window != "" && k.Series != "" {
			t.Errorf("a windowed key keeps its series: %+v", k)
		}
	}
	for _, s := range []string{"", "data", "data /p", "data p hour", "data /p  "} {
		if _, _, err := ParseKey(s); err == nil {
			t.Errorf("%q taken as a key", s)
		}
	}
}
