// Package exposition writes /metrics: each series' label set rendered
// once when a refresh brings it (Family.Sample), scrapes writing those
// bytes grouped by family beside the exporter's own registry (Write).
package exposition

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/model"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/decode"
	"github.com/onchain-exporter/onchain_exporter/series"
)

// Family is one metric family.
type Family struct {
	name, help, unit string
	typ              dto.MetricType
	desc             *prometheus.Desc
	// names are the label names as given; sorted is their order in a
	// series' line (the client library sorts them), nil when it writes
	// one of them quoted (AppendLabelSet).
	names  []string
	sorted []int
}

// Sample is one series of a family: its label set as rendered once
// (shared by a tuple's samples that have the same) and its value,
// written at scrape time.
type Sample struct {
	fam    *Family
	labels string // {a="x",b="y"}, or "" without labels
	value  float64
}

// Family is the sample's family.
func (s Sample) Family() *Family { return s.fam }

// Line is the sample's exposition line, as written.
func (s Sample) Line() []byte { return s.appendLine(nil) }

// appendLine appends the sample's line to b.
func (s Sample) appendLine(b []byte) []byte {
	b = append(append(append(b, s.fam.name...), s.labels...), ' ')
	return append(appendFloat(b, s.value), '\n')
}

// appendFloat writes a value as the client library's text encoder does.
func appendFloat(b []byte, f float64) []byte {
	switch f {
	case 1:
		return append(b, '1')
	case 0:
		return append(b, '0') // -0 too
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64) // NaN, +Inf and -Inf as the encoder writes them
}

// Name is the family's name.
func (f *Family) Name() string { return f.name }

// Type is the family's type.
func (f *Family) Type() dto.MetricType { return f.typ }

// Families hands out one family per name, each kept to one owner, label
// set and type (series.Claims): a tuple that would break that is refused
// the family, not the whole exposition.
type Families struct {
	claims *series.Claims
	mu     sync.Mutex
	byName map[string]*Family
}

// NewFamilies returns Families with no family handed out.
func NewFamilies() *Families {
	return &Families{claims: series.NewClaims(), byName: map[string]*Family{}}
}

func (fs *Families) get(owner string, f *config.Field, labelNames []string) (*Family, error) {
	sf, err := series.Data(f)
	if err != nil {
		return nil, err
	}
	if err := fs.claims.Claim(owner, sf, labelNames); err != nil {
		return nil, err
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fam, ok := fs.byName[sf.Name]; ok {
		return fam, nil
	}
	typ := dto.MetricType_GAUGE
	if sf.Type == series.Counter {
		typ = dto.MetricType_COUNTER
	}
	fam := NewFamily(sf.Name, sf.Help, typ, labelNames)
	fam.unit = sf.Unit
	fs.byName[sf.Name] = fam
	return fam, nil
}

// NewFamily is a family of the exporter's own (its HELP and labels as
// given), of the base unit its name ends in (seconds, bytes) if any.
func NewFamily(name, help string, typ dto.MetricType, labelNames []string) *Family {
	return &Family{name: name, help: help, typ: typ,
		desc: prometheus.NewDesc(name, help, labelNames, nil), unit: baseUnit(name, typ),
		names: slices.Clone(labelNames), sorted: plainOrder(labelNames)}
}

// plainOrder is the order of the label names as the client library
// writes them, sorted; nil when one of them is not a legacy name, which
// it would write quoted (the test the text encoder makes, writeName).
func plainOrder(names []string) []int {
	order := make([]int, len(names))
	for i, n := range names {
		if !model.LegacyValidation.IsValidMetricName(n) {
			return nil
		}
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return strings.Compare(names[a], names[b]) })
	return order
}

// AppendLabelSet appends the label set LabelSet renders, without the
// client library: rendered per scrape, it costs a tuple no memory. ok is
// false where it cannot (a name the library quotes, a value not UTF-8, a
// wrong count of values): LabelSet says what the library does then.
func (f *Family) AppendLabelSet(b []byte, values []string) (_ []byte, ok bool) {
	if f.sorted == nil || len(values) != len(f.sorted) {
		return b, false
	}
	names := f.names
	sep := byte('{')
	for _, i := range f.sorted {
		v := values[i]
		if v == "" {
			continue // left out, as metric leaves it
		}
		if !utf8.ValidString(v) {
			return b, false
		}
		b = append(append(append(b, sep), names[i]...), '=', '"')
		for j := 0; j < len(v); j++ {
			switch c := v[j]; c {
			case '\\':
				b = append(b, '\\', '\\')
			case '"':
				b = append(b, '\\', '"')
			case '\n':
				b = append(b, '\\', 'n')
			default:
				b = append(b, c)
			}
		}
		b, sep = append(b, '"'), ','
	}
	if sep == ',' {
		b = append(b, '}')
	}
	return b, true
}

// baseUnit is the base unit a family's name ends in, as Prometheus names
// them, said without a counter's _total; "" for none.
func baseUnit(name string, typ dto.MetricType) string {
	if typ == dto.MetricType_COUNTER {
		name = strings.TrimSuffix(name, "_total")
	}
	for _, u := range []string{"seconds", "bytes"} {
		if strings.HasSuffix(name, "_"+u) {
			return u
		}
	}
	return ""
}

// Unit is the family's unit, "" for none.
func (f *Family) Unit() string { return f.unit }

// Sample builds one series of a family and renders its label set.
func (f *Family) Sample(value float64, labelValues ...string) (Sample, error) {
	return f.sample(value, "", labelValues)
}

// sample is Sample, the label set taken from like when it renders the
// same (one string for the samples of a tuple that share their labels).
func (f *Family) sample(value float64, like string, labelValues []string) (Sample, error) {
	m, err := f.metric(value, labelValues...)
	if err != nil {
		return Sample{}, err
	}
	line, err := render(f, m)
	if err != nil {
		return Sample{}, err
	}
	// The line is the name, the labels, a space and the value.
	labels, ok := bytes.CutPrefix(line[:max(bytes.LastIndexByte(line, ' '), 0)], []byte(f.name))
	if !ok || (len(labels) > 0 && labels[0] != '{') {
		return Sample{}, fmt.Errorf("family %s: the client library wrote its series as %q", f.name, line)
	}
	if string(labels) != like {
		like = string(labels)
	}
	return Sample{f, like, value}, nil
}

// LabelSet renders the label set of f's series of these label values,
// once: WithLabelSet then makes its samples, of f or of any family of the
// same label names, without rendering it again.
func (f *Family) LabelSet(labelValues ...string) (string, error) {
	s, err := f.sample(0, "", labelValues)
	return s.labels, err
}

// WithLabelSet is a sample of f with value v and a label set LabelSet
// rendered, by f or a family of the same label names.
func (f *Family) WithLabelSet(set string, v float64) Sample {
	return Sample{f, set, v}
}

// metric builds one series of a family; the client library validates the
// label values (not UTF-8: refused). An empty label is left out:
// Prometheus reads it as absent, and a parameter another entry has is not
// written on every series.
func (f *Family) metric(value float64, labelValues ...string) (*dto.Metric, error) {
	vt := prometheus.GaugeValue
	if f.typ == dto.MetricType_COUNTER {
		vt = prometheus.CounterValue
	}
	cm, err := prometheus.NewConstMetric(f.desc, vt, value, labelValues...)
	if err != nil {
		return nil, err
	}
	m := &dto.Metric{}
	if err := cm.Write(m); err != nil {
		return nil, err
	}
	m.Label = slices.DeleteFunc(m.Label, func(l *dto.LabelPair) bool { return l.GetValue() == "" })
	return m, nil
}

// Build turns a tuple's decoded samples into series, ready to be served
// as they are by every scrape until the next refresh, and says what it
// refused (a family another tuple holds, two fields of one label set).
func (fs *Families) Build(t *config.Tuple, samples []decode.Sample) ([]Sample, []string) {
	out := make([]Sample, 0, len(samples))
	var problems []string
	seen := map[string]bool{}
	like := "" // the label set of the sample before
	for _, s := range samples {
		names, values := series.Labels(t, s)
		fam, err := fs.get(t.LabelGroup(), s.Field, names)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		id := s.Field.Name + "\xff" + strings.Join(s.ExtraValues(), "\xff")
		if seen[id] {
			problems = append(problems, fmt.Sprintf("two fields give family onchain_%s the same labels; the second is dropped", s.Field.Name))
			continue
		}
		seen[id] = true
		smp, err := fam.sample(s.Value, like, values)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		out, like = append(out, smp), smp.labels
	}
	return out, problems
}
