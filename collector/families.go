package collector

import (
	"fmt"
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

// family is one metric family: its name, HELP, type and label names.
type family struct {
	name, help string
	typ        dto.MetricType
	labels     string // comma-joined label names
	desc       *prometheus.Desc
}

// sampleOf is one series of a family, rendered for the exposition.
type sampleOf struct {
	fam  *family
	line []byte
}

// families hands out one family per name, as package series names it,
// and keeps every family to one owner, label set and type, whichever tuple
// produces it first (series.Claims); a tuple that would break that is
// refused the family (and told why) instead of breaking the whole
// exposition.
type families struct {
	claims *series.Claims
	mu     sync.Mutex
	byName map[string]*family
}

func newFamilies() *families {
	return &families{claims: series.NewClaims(), byName: map[string]*family{}}
}

func (fs *families) get(owner string, f *config.Field, labelNames []string) (*family, error) {
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
	fam := newFamily(sf.Name, sf.Help, typ, labelNames)
	fs.byName[sf.Name] = fam
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
		smp, err := fam.sample(s.Value, values...)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		out = append(out, smp)
	}
	return out, problems
}
