package backfill

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/decode"
	keyplan "github.com/onchain-exporter/onchain_exporter/plan"
	"github.com/onchain-exporter/onchain_exporter/series"
)

// A row becomes samples here: each decoded sample named and labelled by
// package series, as the live exposition names it, plus the labels of
// --label, and the per-tuple families of the row's time and block height.

// Label is one name and value added to every series (--label).
type Label struct{ Name, Value string }

// seriesDef is one series of a tuple as it is written.
type seriesDef struct {
	fam series.Family
	// name is the sample name: the family name a scrape stores.
	name string
	// labels are sorted by name, __name__ left out.
	labels []Label
	// text is name{labels} in the exposition's escaping: the series'
	// identity in the output.
	text string
	// claim is the label names the family is claimed with (data families;
	// nil for the per-tuple ones, whose labels are the configuration's).
	claim []string
}

// tupleSeries hands out the series of one tuple, each made once.
type tupleSeries struct {
	cfg    *config.Config
	t      *config.Tuple
	extra  []Label
	claims *series.Claims
	defs   []*seriesDef
	// byField finds the series of a decoded sample: by the field's name,
	// then by its extra labels.
	byField     map[string][]fieldSeries
	stamp, info int // the Timestamp and BlockHeight series, -1 until made
	problems    []string
	// seen marks the series given a sample in the row being read.
	seen []int
	row  int
}

type fieldSeries struct {
	names, values []string
	idx           int // -1: refused (problem recorded)
}

func newTupleSeries(cfg *config.Config, t *config.Tuple, extra []Label, claims *series.Claims) *tupleSeries {
	return &tupleSeries{cfg: cfg, t: t, extra: extra, claims: claims, byField: map[string][]fieldSeries{}, stamp: -1, info: -1}
}

// sample is the series of one decoded sample, or -1 when the exposition
// would refuse it (the reason goes to problems once).
func (ts *tupleSeries) sample(s decode.Sample) int {
	for _, fs := range ts.byField[s.Field.Name] {
		if slices.Equal(fs.names, s.ExtraNames()) && slices.Equal(fs.values, s.ExtraValues()) {
			return fs.idx
		}
	}
	idx := -1
	f, err := series.Data(s.Field)
	if err == nil {
		names, values := series.Labels(ts.t, s)
		if err = ts.claims.Claim(ts.t.LabelGroup(), f, names); err == nil {
			idx = ts.add(f, names, values)
			ts.defs[idx].claim = names
		}
	}
	if err != nil {
		ts.problems = append(ts.problems, err.Error())
	}
	ts.byField[s.Field.Name] = append(ts.byField[s.Field.Name], fieldSeries{names: s.ExtraNames(), values: s.ExtraValues(), idx: idx})
	return idx
}

// tupleFamily is the series of a per-tuple family (Timestamp, BlockHeight).
func (ts *tupleSeries) tupleFamily(f series.Family, idx *int) int {
	if *idx < 0 {
		names, values := series.TupleLabels(ts.cfg, ts.t)
		*idx = ts.add(f, names, values)
	}
	return *idx
}

func (ts *tupleSeries) add(f series.Family, names, values []string) int {
	def := &seriesDef{fam: f, name: f.Name, labels: withExtra(names, values, ts.extra)}
	def.text = seriesText(def.name, def.labels)
	ts.defs = append(ts.defs, def)
	ts.seen = append(ts.seen, -1)
	return len(ts.defs) - 1
}

// withExtra adds the --label pairs to a series' labels, as Prometheus adds
// job and instance to a scraped series: a label the series already has is
// kept as exported_<name> (honor_labels: false). Labels with an empty
// value are left out, as Prometheus leaves them out of what it stores.
// Sorted by name.
func withExtra(names, values []string, extra []Label) []Label {
	out := make([]Label, 0, len(names)+len(extra))
	for i, n := range names {
		if values[i] != "" {
			out = append(out, Label{n, values[i]})
		}
	}
	for _, e := range extra {
		for i := range out {
			if out[i].Name == e.Name {
				out[i].Name = "exported_" + e.Name
			}
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// rowSamples spools the samples of one row at the time ms: its values,
// the row's time and, for block rows, its height. A second field giving a
// series the same row is dropped, as the live exposition drops it.
func (ts *tupleSeries) rowSamples(sp *spool, r decode.Row, ms int64) error {
	ts.row++
	for _, s := range r.Samples {
		idx := ts.sample(s)
		if idx < 0 {
			continue
		}
		if ts.seen[idx] == ts.row {
			ts.problems = append(ts.problems, fmt.Sprintf("two fields give family %s the same labels; the second is dropped", ts.defs[idx].name))
			continue
		}
		ts.seen[idx] = ts.row
		if err := sp.add(idx, ms, s.Value); err != nil {
			return err
		}
	}
	if err := sp.add(ts.tupleFamily(series.Timestamp, &ts.stamp), ms, float64(r.Time.Unix())); err != nil {
		return err
	}
	if r.HasBlock {
		return sp.add(ts.tupleFamily(series.BlockHeight, &ts.info), ms, r.Block)
	}
	return nil
}

// firstProblems is the problems, each once, at most n.
func firstProblems(ps []string, n int) []string {
	var out []string
	for _, p := range ps {
		if !slices.Contains(out, p) {
			out = append(out, p)
			if len(out) == n {
				break
			}
		}
	}
	return out
}

// seriesText renders name{labels} as the exposition writes a series.
func seriesText(name string, labels []Label) string {
	var b strings.Builder
	b.WriteString(name)
	if len(labels) == 0 {
		return b.String()
	}
	b.WriteByte('{')
	for i, l := range labels {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(l.Name)
		b.WriteString(`="`)
		escaper.WriteString(&b, l.Value)
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

// escaper escapes a label value, and an OpenMetrics HELP text, alike.
var escaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)

// Stamp says which time a row's samples carry.
type Stamp string

const (
	// StampEnd stamps a row at the end of its interval: the first moment
	// a scrape of the live exporter could have served it (a block row at
	// its block's time). The default.
	StampEnd Stamp = "end"
	// StampStart stamps a row at its own time, the start of its interval,
	// as the upstream dates it.
	StampStart Stamp = "start"
)

// shift is how far after its own time a row of t is stamped; spacing is
// the rows' spacing, for tuples without a fixed window.
func (s Stamp) shift(t *config.Tuple, spacing time.Duration) time.Duration {
	if s != StampEnd || t.Window == "block" {
		return 0
	}
	if w := keyplan.WindowDuration(t.Window); w > 0 {
		return w
	}
	return spacing
}

// spacingOf is the median spacing of rows, oldest first; 0 for fewer
// than two.
func spacingOf(rows []decode.Row) time.Duration {
	if len(rows) < 2 {
		return 0
	}
	gaps := make([]time.Duration, 0, len(rows)-1)
	for i := 1; i < len(rows); i++ {
		gaps = append(gaps, rows[i].Time.Sub(rows[i-1].Time))
	}
	slices.Sort(gaps)
	return gaps[len(gaps)/2]
}
