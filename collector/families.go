package collector

import (
	"fmt"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/config"
)

// families hands out one Desc per family name and keeps every family to one
// label set, one type and one HELP, whichever tuple produces it first; a
// tuple that would break that is refused the family (and told why) instead
// of breaking the whole exposition.
type families struct {
	mu     sync.Mutex
	byName map[string]*family
}

type family struct {
	owner  string // the label group that produces it
	labels string
	typ    prometheus.ValueType
	desc   *prometheus.Desc
}

// Families the exporter itself writes per tuple; data fields may not take
// their names.
var reservedFamilies = map[string]bool{
	"onchain_data_timestamp_seconds": true, "onchain_data_block_height": true,
}

func newFamilies() *families { return &families{byName: map[string]*family{}} }

func (fs *families) desc(owner string, f *config.Field, labelNames []string) (*prometheus.Desc, prometheus.ValueType, error) {
	name := "onchain_" + f.Name
	typ := prometheus.GaugeValue
	if f.Type == "counter" {
		typ = prometheus.CounterValue
	}
	if reservedFamilies[name] || strings.HasPrefix(name, namespace+"_") {
		return nil, 0, fmt.Errorf("family %s is reserved for the exporter's own metrics; rename the field with fields.<name>.name", name)
	}
	if typ == prometheus.GaugeValue && strings.HasSuffix(name, "_total") {
		return nil, 0, fmt.Errorf("family %s is a gauge and may not end in _total; rename it with fields.<name>.name", name)
	}
	key := strings.Join(labelNames, ",")
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fam, ok := fs.byName[name]; ok {
		switch {
		case fam.owner != owner:
			return nil, 0, fmt.Errorf("family %s is already produced by %s", name, fam.owner)
		case fam.labels != key:
			return nil, 0, fmt.Errorf("family %s already has labels {%s}, not {%s}", name, fam.labels, key)
		case fam.typ != typ:
			return nil, 0, fmt.Errorf("family %s is already a %s", name, f.Type)
		}
		return fam.desc, fam.typ, nil
	}
	help := f.Help
	if help == "" {
		help = "Field " + f.Name + " as the API serves it."
	}
	fam := &family{owner: owner, labels: key, typ: typ, desc: prometheus.NewDesc(name, help, labelNames, nil)}
	fs.byName[name] = fam
	return fam.desc, fam.typ, nil
}

// build turns decoded samples into metrics, ready to be served as they are
// by every scrape until the next refresh.
func (fs *families) build(t *config.Tuple, d *decoded) ([]prometheus.Metric, []string) {
	out := make([]prometheus.Metric, 0, len(d.samples))
	var problems []string
	seen := map[string]bool{}
	for _, s := range d.samples {
		names := append(append(make([]string, 0, len(t.LabelNames)+len(s.extraNames)), t.LabelNames...), s.extraNames...)
		values := append(append(make([]string, 0, len(names)), t.LabelValues...), s.extraValues...)
		desc, typ, err := fs.desc(t.LabelGroup, s.field, names)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		id := s.field.Name + "\xff" + strings.Join(s.extraValues, "\xff")
		if seen[id] {
			problems = append(problems, fmt.Sprintf("two fields give family onchain_%s the same labels; the second is dropped", s.field.Name))
			continue
		}
		seen[id] = true
		m, err := prometheus.NewConstMetric(desc, typ, s.value, values...)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		out = append(out, m)
	}
	return out, problems
}
