package collector

import (
	"fmt"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/decode"
)

// Metrics are built once, when a refresh brings new values, as the
// protocol-buffer form the exposition encoders read; every scrape until the
// next refresh serves those same objects. A scrape of 10 000 cached series
// thus costs the encoding and nothing else: no label building, no
// registry consistency pass.

// family is one metric family: its name, HELP, type and label names.
type family struct {
	name, help string
	typ        dto.MetricType
	labels     string // comma-joined label names
	owner      string // the label group that produces it
	desc       *prometheus.Desc
}

// sampleOf is one series of a family, rendered for the exposition.
type sampleOf struct {
	fam  *family
	line []byte
}

// families hands out one family per name and keeps every family to one
// label set, one type and one HELP, whichever tuple produces it first; a
// tuple that would break that is refused the family (and told why) instead
// of breaking the whole exposition.
type families struct {
	mu     sync.Mutex
	byName map[string]*family
}

// Families the exporter itself writes per tuple; data fields may not take
// their names.
var reservedFamilies = map[string]bool{
	"onchain_data_timestamp_seconds": true, "onchain_data_block_height": true,
}

// cachedNote ends the HELP of every data family.
const cachedNote = "Cached: refreshed from upstream when a new row is due."

func newFamilies() *families { return &families{byName: map[string]*family{}} }

func (fs *families) get(owner string, f *config.Field, labelNames []string) (*family, error) {
	name := "onchain_" + f.Name
	typ := dto.MetricType_GAUGE
	if f.Type == "counter" {
		typ = dto.MetricType_COUNTER
	}
	if reservedFamilies[name] || strings.HasPrefix(name, namespace+"_") {
		return nil, fmt.Errorf("family %s is reserved for the exporter's own metrics; rename the field with fields.<name>.name", name)
	}
	if typ == dto.MetricType_GAUGE && strings.HasSuffix(name, "_total") {
		return nil, fmt.Errorf("family %s is a gauge and may not end in _total; rename it with fields.<name>.name", name)
	}
	key := strings.Join(labelNames, ",")
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fam, ok := fs.byName[name]; ok {
		switch {
		case fam.owner != owner:
			return nil, fmt.Errorf("family %s is already produced by %s; give one of the fields another name with fields.<name>.name", name, fam.owner)
		case fam.labels != key:
			return nil, fmt.Errorf("family %s already has labels {%s}, not {%s}", name, fam.labels, key)
		case fam.typ != typ:
			return nil, fmt.Errorf("family %s is already a %s", name, strings.ToLower(fam.typ.String()))
		}
		return fam, nil
	}
	help := f.Help
	if help == "" {
		help = "Field " + f.Name + " as the API serves it."
	}
	// The writing-exporters guide asks that caching be visible.
	fam := newFamily(name, help+" "+cachedNote, typ, labelNames)
	fam.owner = owner
	fs.byName[name] = fam
	return fam, nil
}

func newFamily(name, help string, typ dto.MetricType, labelNames []string) *family {
	return &family{name: name, help: help, typ: typ, labels: strings.Join(labelNames, ","),
		desc: prometheus.NewDesc(name, help, labelNames, nil)}
}

// sample builds and renders one series of a family.
func (f *family) sample(value float64, labelValues ...string) (sampleOf, error) {
	m, err := f.metric(value, labelValues...)
	if err != nil {
		return sampleOf{}, err
	}
	line, err := render(f, m)
	if err != nil {
		return sampleOf{}, err
	}
	return sampleOf{f, line}, nil
}

// metric builds one series of a family; the client library validates the
// label values (an upstream string that is not UTF-8 is refused here).
func (f *family) metric(value float64, labelValues ...string) (*dto.Metric, error) {
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
	return m, nil
}

// build turns decoded samples into metrics, ready to be served as they are
// by every scrape until the next refresh.
func (fs *families) build(t *config.Tuple, samples []decode.Sample) ([]sampleOf, []string) {
	out := make([]sampleOf, 0, len(samples))
	var problems []string
	seen := map[string]bool{}
	for _, s := range samples {
		names := append(append(make([]string, 0, len(t.LabelNames)+len(s.ExtraNames)), t.LabelNames...), s.ExtraNames...)
		values := append(append(make([]string, 0, len(names)), t.LabelValues...), s.ExtraValues...)
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
		smp, err := fam.sample(s.Value, values...)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		out = append(out, smp)
	}
	return out, problems
}
