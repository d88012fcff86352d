package exposition

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

// A sample's line, its label set rendered once and its value written at
// scrape time, is the line the client library's text encoder writes, for
// any value and label values that need escaping; a family of the same
// label names takes the label set as it is.
func TestLineIsTheEncodersLine(t *testing.T) {
	f := NewFamily("onchain_x", "x", dto.MetricType_GAUGE, []string{"a", "b"})
	g := NewFamily("onchain_y_total", "y", dto.MetricType_COUNTER, []string{"a", "b"})
	other := NewFamily("onchain_z", "z", dto.MetricType_GAUGE, []string{"a"})
	values := []float64{0, math.Copysign(0, -1), 1, -1, 2, 0.1, 1.7641728e9, 1764172800.123, 1e-300, 5e-324, math.MaxFloat64,
		-123456789.25, math.NaN(), math.Inf(1), math.Inf(-1), 1e21, 123456789012345678}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		values = append(values, math.Float64frombits(r.Uint64()), r.NormFloat64()*1e6, float64(r.Int64N(1<<53)))
	}
	for _, lv := range [][]string{{"binance", "day"}, {`quo"te`, "back\\slash\nline"}, {"", "ünï"}, {"", ""}} {
		for _, v := range values {
			s, err := f.Sample(v, lv...)
			if err != nil {
				t.Fatal(err)
			}
			m, err := f.metric(v, lv...)
			if err != nil {
				t.Fatal(err)
			}
			want, err := render(f, m)
			if err != nil {
				t.Fatal(err)
			}
			if string(s.Line()) != string(want) {
				t.Fatalf("value %v, labels %q: line %q, the encoder's %q", v, lv, s.Line(), want)
			}
			same, ok := g.SameLabels(s, v)
			gm, _ := g.metric(v, lv...)
			gwant, _ := render(g, gm)
			if !ok || string(same.Line()) != string(gwant) {
				t.Fatalf("value %v, labels %q: %q (%v), the encoder's %q", v, lv, same.Line(), ok, gwant)
			}
		}
	}
	s, _ := f.Sample(1, "x", "y")
	if _, ok := other.SameLabels(s, 1); ok {
		t.Error("a family of other label names took the label set")
	}
}

// SameLabels is a sample of f with the label set of like and value v;
// ok is false when f's label names are not like's family's.
func (f *Family) SameLabels(like Sample, v float64) (s Sample, ok bool) {
	if like.fam == nil || !slices.Equal(like.fam.names, f.names) {
		return Sample{}, false
	}
	return Sample{f, like.labels, v}, true
}

// A label set rendered once (LabelSet) makes, for any family of the same
// label names, the sample Sample makes.
func TestLabelSetIsTheSamplesLabelSet(t *testing.T) {
	f := NewFamily("onchain_x", "x", dto.MetricType_GAUGE, []string{"a", "b"})
	g := NewFamily("onchain_y_total", "y", dto.MetricType_COUNTER, []string{"a", "b"})
	for _, lv := range [][]string{{"binance", "day"}, {`quo"te`, "back\\slash\nline"}, {"", "ünï"}, {"", ""}} {
		set, err := f.LabelSet(lv...)
		if err != nil {
			t.Fatal(err)
		}
		for _, fam := range []*Family{f, g} {
			for _, v := range []float64{0, 1, -2.5, 1.7641728e9, math.NaN()} {
				want, err := fam.Sample(v, lv...)
				if err != nil {
					t.Fatal(err)
				}
				if got := fam.WithLabelSet(set, v); string(got.Line()) != string(want.Line()) {
					t.Fatalf("labels %q, value %v: %q, Sample's %q", lv, v, got.Line(), want.Line())
				}
			}
		}
	}
	if _, err := f.LabelSet("\xff", "day"); err == nil {
		t.Error("a label value that is not UTF-8 was rendered")
	}
	if _, err := f.LabelSet("one"); err == nil {
		t.Error("one label value of two was rendered")
	}
}

// AppendLabelSet renders, without the client library, the label set
// LabelSet renders with it, for label names given in any order and
// values that need escaping, are empty or are random bytes; where it
// cannot (a name the library quotes, a value that is not UTF-8, a count
// of values that is not the family's) it says so.
func TestAppendLabelSetIsLabelSet(t *testing.T) {
	fams := []*Family{
		NewFamily("onchain_x", "x", dto.MetricType_GAUGE, []string{"window", "api", "asset", "endpoint", "_b", "A9", "c:d"}),
		NewFamily("onchain_y", "y", dto.MetricType_GAUGE, []string{"a"}),
		NewFamily("onchain_z", "z", dto.MetricType_GAUGE, nil),
	}
	pieces := []string{"", "btc", `"`, `\`, "\n", "ünï", "\xff", "\t", "}", ",", "=", "\u202e"}
	r := rand.New(rand.NewPCG(3, 4))
	for _, f := range fams {
		for range 5000 {
			lv := make([]string, len(f.names))
			for i := range lv {
				for range r.IntN(4) {
					lv[i] += pieces[r.IntN(len(pieces))]
				}
			}
			want, err := f.LabelSet(lv...)
			got, ok := f.AppendLabelSet([]byte("kept"), lv)
			switch {
			case err != nil && ok:
				t.Fatalf("%s %q: rendered %q, the library refuses: %v", f.name, lv, got, err)
			case err == nil && (!ok || string(got) != "kept"+want):
				t.Fatalf("%s %q: %q (%v), the library's %q", f.name, lv, got, ok, want)
			}
		}
	}
	quoted := NewFamily("onchain_q", "q", dto.MetricType_GAUGE, []string{"api", "end.point"})
	if got, ok := quoted.AppendLabelSet(nil, []string{"data", "/p"}); ok {
		t.Errorf("a label name the library quotes: %q", got)
	}
	if got, ok := fams[0].AppendLabelSet(nil, []string{"data"}); ok {
		t.Errorf("one label value of six: %q", got)
	}
}
