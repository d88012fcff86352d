// Package series owns what a tuple's samples are called and labelled.
// The live exposition and the backfill both ask here, so that a
// backfilled series and a scraped one are one series in Prometheus.
package series

import (
	"fmt"
	"strings"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/decode"
)

// Prefix starts every data family name.
const Prefix = "onchain_"

// ownPrefix starts the exporter's own families, which data fields may not
// take.
const ownPrefix = config.Namespace + "_"

// Types of a family.
const (
	Gauge   = "gauge"
	Counter = "counter"
)

// CachedNote ends the HELP of every data family: the writing-exporters
// guide asks that caching be visible.
const CachedNote = "Cached: refreshed from upstream when a new row is due."

// Family is one metric family; Unit is its OpenMetrics UNIT, "" for none.
type Family struct {
	Name, Help, Type, Unit string
}

// The per-tuple families of the row's time and block height, labelled by
// TupleLabels.
var (
	Timestamp = Family{Name: "onchain_data_timestamp_seconds", Type: Gauge, Unit: "seconds",
		Help: "Time of the row the tuple's values come from (interval start), as a Unix time."}
	BlockHeight = Family{Name: "onchain_data_block_height", Type: Gauge,
		Help: "Block height of the newest row of a block-window tuple."}
)

// reserved are the families the exporter writes per tuple.
var reserved = map[string]bool{Timestamp.Name: true, BlockHeight.Name: true}

// Data is the family of a field's values, or why the exposition refuses
// it.
func Data(f *config.Field) (Family, error) {
	name := Prefix + f.Name
	typ := Gauge
	if f.Type == Counter {
		typ = Counter
	}
	if reserved[name] || strings.HasPrefix(name, ownPrefix) {
		return Family{}, fmt.Errorf("family %s is reserved for the exporter's own metrics; rename the field with fields.<name>.name", name)
	}
	if typ == Gauge && strings.HasSuffix(name, "_total") {
		return Family{}, fmt.Errorf("family %s is a gauge and may not end in _total; rename it with fields.<name>.name", name)
	}
	if typ == Counter && !strings.HasSuffix(name, "_total") {
		return Family{}, fmt.Errorf("family %s is a counter and must end in _total; rename it with fields.<name>.name", name)
	}
	help := f.Help
	if help == "" {
		help = "Field " + f.Name + " as the API serves it."
	}
	return Family{Name: name, Help: help + " " + CachedNote, Type: typ, Unit: unitOf(name, typ, f.Unit)}, nil
}

// unitOf is the field's unit where the family's name (without a
// counter's _total) ends in it, as OpenMetrics requires; else "".
func unitOf(name, typ, unit string) string {
	if typ == Counter {
		name = strings.TrimSuffix(name, "_total")
	}
	if unit == "" || !strings.HasSuffix(name, "_"+unit) {
		return ""
	}
	return unit
}

// Labels are the label names and values of one decoded sample of a tuple:
// the tuple's, then the sample's own. The slices are new.
func Labels(t *config.Tuple, s decode.Sample) (names, values []string) {
	names = make([]string, 0, len(t.LabelNames())+len(s.ExtraNames()))
	names = append(append(names, t.LabelNames()...), s.ExtraNames()...)
	values = make([]string, 0, len(names))
	values = append(append(values, t.LabelValues...), s.ExtraValues()...)
	return names, values
}

// TupleLabels are the label names and values of a tuple's own families.
func TupleLabels(cfg *config.Config, t *config.Tuple) (names, values []string) {
	return cfg.TupleLabelNames, t.TupleLabelValues
}
