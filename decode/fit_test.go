package decode

import (
	"slices"
	"strings"
	"testing"
)

// What Decode builds for a tuple fits it (Fit is its inverse), each
// sample's field the file's own; a sample of a field the file does not
// ask, with labels its field does not give, or beyond MaxSamples is
// refused with the reason.
func TestFitIsTheInverseOfDecode(t *testing.T) {
	tp := tupleFor(t, usdtBlockYAML)
	body := `{"status":{"code":200,"message":"success"},"result":{"window":"block","data":[
		{"datetime":"2026-11-20 12:00:24","blockheight":21000002,"events_mint_count":2,"events_burn_count":0}]}}`
	d, err := decode([]byte(body), tp, rowsAt("result.data"))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Samples) == 0 {
		t.Fatal("no samples decoded")
	}
	sent := slices.Clone(d.Samples)
	for i := range sent { // as a peer's row arrives: a copy of each field
		f := *sent[i].Field
		sent[i].Field = &f
	}
	if err := Fit(tp, sent); err != nil {
		t.Fatalf("what Decode built does not fit its tuple: %v", err)
	}
	for i := range sent {
		if sent[i].Field != d.Samples[i].Field {
			t.Errorf("sample %d keeps the field it was sent with, not the file's", i)
		}
	}
	if n := MaxSamples(tp); n < len(d.Samples) {
		t.Errorf("MaxSamples %d below the %d samples one answer gave", n, len(d.Samples))
	}

	unknown := slices.Clone(d.Samples)
	f := *unknown[0].Field
	f.Name = "not_asked"
	unknown[0].Field = &f
	if err := Fit(tp, unknown); err == nil || !strings.Contains(err.Error(), `field "not_asked" is not one the file asks`) {
		t.Errorf("a field the file does not ask: %v", err)
	}

	relabelled := slices.Clone(d.Samples)
	x := relabelled[0].ExtraValues()
	relabelled[0].Extra = ExtraOf(relabelled[0].ExtraNames(), append(slices.Clone(x[:len(x)-1]), "rebrand"))
	if err := Fit(tp, relabelled); err == nil || !strings.Contains(err.Error(), `"rebrand"`) {
		t.Errorf("a label its field does not give: %v", err)
	}

	if err := Fit(tp, []Sample{{}}); err == nil || !strings.Contains(err.Error(), "sample 0 has no field") {
		t.Errorf("a sample without a field: %v", err)
	}
}
