// Package exposition writes /metrics: every series rendered to its text
// line once, when a refresh brings it (Family.Sample), and a scrape
// writing those bytes as they are, grouped by family, beside the
// families of the exporter's own registry (Write). Families hands out one
// family per name as package series names it, each kept to one owner,
// label set and type.
package exposition

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/decode"
	"github.com/onchain-exporter/onchain_exporter/series"
)

// Metrics are built once, when a refresh brings new values, as the
// protocol-buffer form the exposition encoders read; every scrape until the
// next refresh serves those same objects. A scrape of 10 000 cached series
// thus costs the encoding and nothing else: no label building, no
// registry consistency pass.

// Family is one metric family: its name, HELP, unit, type and label
// names.
type Family struct {
	name, help, unit string
	typ              dto.MetricType
	labels           string // comma-joined label names
	desc             *prometheus.Desc
}

// Sample is one series of a family, rendered for the exposition.
type Sample struct {
	fam  *Family
	line []byte
}

// Family is the sample's family.
func (s Sample) Family() *Family { return s.fam }

// Line is the sample's exposition line, as written.
func (s Sample) Line() []byte { return s.line }

// Name is the family's name.
func (f *Family) Name() string { return f.name }

// Type is the family's type.
func (f *Family) Type() dto.MetricType { return f.typ }

// Families hands out one family per name, as package series names it,
// and keeps every family to one owner, label set and type, whichever tuple
// produces it first (series.Claims); a tuple that would break that is
// refused the family (and told why) instead of breaking the whole
// exposition.
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
	fam := NewFamily(sf.Name, sf.Help, typ, labelNames).WithUnit(sf.Unit)
	fs.byName[sf.Name] = fam
	return fam, nil
}

// NewFamily is a family of the exporter's own (its HELP and labels as
// given), of the base unit its name ends in (seconds, bytes) if any.
func NewFamily(name, help string, typ dto.MetricType, labelNames []string) *Family {
	return &Family{name: name, help: help, typ: typ, labels: strings.Join(labelNames, ","),
		desc: prometheus.NewDesc(name, help, labelNames, nil), unit: baseUnit(name, typ)}
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

// WithUnit gives the family a unit ("" for none), written in OpenMetrics
// as its # UNIT line: one the name ends in (seconds of x_seconds); f
// itself, for a family being made.
func (f *Family) WithUnit(unit string) *Family {
	f.unit = unit
	return f
}

// Unit is the family's unit, "" for none.
func (f *Family) Unit() string { return f.unit }

// Sample builds and renders one series of a family.
func (f *Family) Sample(value float64, labelValues ...string) (Sample, error) {
	m, err := f.metric(value, labelValues...)
	if err != nil {
		return Sample{}, err
	}
	line, err := render(f, m)
	if err != nil {
		return Sample{}, err
	}
	return Sample{f, line}, nil
}

// metric builds one series of a family; the client library validates the
// label values (an upstream string that is not UTF-8 is refused here). A
// label whose value is empty is left out: Prometheus reads it as absent,
// so the series is the same, and its line holds only its own labels (a
// parameter another entry has is not written on every series).
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
	for _, s := range samples {
		names, values := series.Labels(t, s)
		fam, err := fs.get(t.LabelGroup, s.Field, names)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		id := s.Field.Name + "\xff" + strings.Join(s.ExtraValues, "\xff")
		if seen[id] {
			problems = append(problems, fmt.Sprintf("two fields give family onchain_%s the same labels; the second is dropped", s.Field.Name))
			continue
		}
		seen[id] = true
		smp, err := fam.Sample(s.Value, values...)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		out = append(out, smp)
	}
	return out, problems
}
