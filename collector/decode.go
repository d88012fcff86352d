package collector

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// sample is one value of one family, before it becomes a metric.
type sample struct {
	field       *config.Field
	extraNames  []string // row labels, constant labels, key label
	extraValues []string
	value       float64
}

// decoded is what one answer says about a tuple.
type decoded struct {
	samples []sample
	// rowTime is the time of the newest row that gave a value; newest is
	// the newest row in the answer, and interval the mean spacing of rows.
	rowTime, newest time.Time
	interval        time.Duration
	block           float64
	hasBlock        bool
	deprecated      bool
	// problems are bad values skipped (a string where a number belongs).
	problems []string
}

// Keys that locate a row rather than measure something.
var timeKeys = []string{"datetime", "date", "timestamp", "time"}

var timeLayouts = []string{"2006-01-02 15:04:05", "2006-01-02", time.RFC3339, "2006-01-02T15:04:05", "2006-01-02 15:04"}

type row struct {
	obj  map[string]any
	time time.Time
}

// decode reads the rows of an answer and takes, per field (and per
// combination of label fields), the newest non-null value. Rows are ordered
// by their time key, not by their position: the API serves them latest
// first, and a payload that does not is read just as well.
func decode(body []byte, t *config.Tuple, defaultRows string) (*decoded, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var root any
	if err := dec.Decode(&root); err != nil {
		return nil, fmt.Errorf("invalid JSON: %s", upstream.ShortJSONError(err))
	}
	rowsPath := t.Rows
	if rowsPath == "" {
		rowsPath = defaultRows
	}
	node, ok := upstream.Lookup(root, rowsPath)
	if !ok {
		return nil, fmt.Errorf("no %q in the answer", rowsPath)
	}
	var list []any
	switch v := node.(type) {
	case []any:
		list = v
	case map[string]any:
		list = []any{v}
	case nil:
		list = nil
	default:
		return nil, fmt.Errorf("%q is not a list of rows", rowsPath)
	}
	d := &decoded{}
	if m, ok := upstream.Lookup(root, "status.message"); ok {
		if s, _ := m.(string); strings.EqualFold(strings.TrimSpace(s), "deprecated") {
			d.deprecated = true
		}
	}
	rootObj, _ := root.(map[string]any)
	rows := make([]row, 0, len(list))
	for i, item := range list {
		obj, ok := item.(map[string]any)
		if !ok {
			d.problems = append(d.problems, fmt.Sprintf("row %d is not an object", i))
			continue
		}
		r := row{obj: obj}
		r.time, ok = rowTime(obj, t.TimeKey)
		if !ok && rootObj != nil {
			r.time, _ = rowTime(rootObj, t.TimeKey)
		}
		rows = append(rows, r)
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].time.After(rows[j].time) })
	if len(rows) > 0 {
		d.newest = rows[0].time
		if n := len(rows); n > 1 && !rows[n-1].time.IsZero() {
			d.interval = rows[0].time.Sub(rows[n-1].time) / time.Duration(n-1)
		}
		if b, ok := number(rows[0].obj["blockheight"]); ok {
			d.block, d.hasBlock = b, true
		}
	}
	d.collect(rows, t)
	return d, nil
}

// collect walks rows newest first, keeping the first usable value of every
// (label values, field) pair.
func (d *decoded) collect(rows []row, t *config.Tuple) {
	skip := map[string]bool{"blockheight": true}
	for _, k := range timeKeys {
		skip[k] = true
	}
	if t.TimeKey != "" {
		skip[t.TimeKey] = true
	}
	for _, l := range t.LabelFields {
		skip[l] = true
	}
	seen := map[string]bool{}
	for _, r := range rows {
		labels := make([]string, len(t.LabelFields))
		for i, l := range t.LabelFields {
			labels[i] = labelValue(r.obj[l])
		}
		group := strings.Join(labels, "\xff")
		for _, name := range slices.Sorted(maps.Keys(r.obj)) {
			if skip[name] {
				continue
			}
			f := t.Fields[name]
			if f == nil {
				if !t.AllNumeric {
					continue
				}
				f = derivedField(name, t)
			}
			key := group + "\xff" + name
			if seen[key] {
				continue
			}
			n := len(d.samples)
			d.add(r.obj[name], name, f, t, labels)
			if len(d.samples) > n {
				seen[key] = true
				if r.time.After(d.rowTime) {
					d.rowTime = r.time
				}
			}
		}
	}
}

// add turns one field value into samples: a number, or an object of
// numbers when the field has a key label. Null means "no value in this
// row"; a string or a non-finite number is bad data for that field.
func (d *decoded) add(v any, name string, f *config.Field, t *config.Tuple, labels []string) {
	if v == nil {
		return
	}
	if obj, isObj := v.(map[string]any); isObj {
		if f.KeyLabel == "" {
			return // nested objects are not values unless a key label says so
		}
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			x, ok := number(obj[k])
			if !ok {
				if obj[k] != nil {
					d.problems = append(d.problems, fmt.Sprintf("field %s.%s is not a finite number", name, k))
				}
				continue
			}
			d.samples = append(d.samples, newSample(f, t, labels, x, f.KeyLabel, k))
		}
		return
	}
	if _, isBool := v.(bool); isBool {
		return
	}
	if _, isList := v.([]any); isList {
		return
	}
	x, ok := number(v)
	if !ok {
		d.problems = append(d.problems, fmt.Sprintf("field %s is not a finite number (%s)", name, describe(v)))
		return
	}
	d.samples = append(d.samples, newSample(f, t, labels, x, "", ""))
}

func newSample(f *config.Field, t *config.Tuple, rowLabels []string, v float64, keyLabel, key string) sample {
	s := sample{field: f, value: v * f.Scale}
	s.extraNames = append(s.extraNames, t.LabelFields...)
	s.extraValues = append(s.extraValues, rowLabels...)
	for _, k := range slices.Sorted(maps.Keys(f.Labels)) {
		s.extraNames = append(s.extraNames, k)
		s.extraValues = append(s.extraValues, f.Labels[k])
	}
	if keyLabel != "" {
		s.extraNames = append(s.extraNames, keyLabel)
		s.extraValues = append(s.extraValues, key)
	}
	return s
}

// derivedField names a field the catalog does not know.
func derivedField(name string, t *config.Tuple) *config.Field {
	return &config.Field{
		Name:  config.DataFamilyName(name),
		Help:  fmt.Sprintf("Field %s of %s, as the API serves it (not in the built-in catalog).", name, t.Path),
		Type:  "gauge",
		Scale: 1,
	}
}

// number accepts JSON numbers only, and only finite ones.
func number(v any) (float64, bool) {
	var f float64
	switch x := v.(type) {
	case json.Number:
		var err error
		f, err = strconv.ParseFloat(string(x), 64)
		if err != nil {
			return 0, false
		}
	case float64:
		f = x
	default:
		return 0, false
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

func describe(v any) string {
	switch x := v.(type) {
	case string:
		if len(x) > 20 {
			x = x[:20] + "..."
		}
		return fmt.Sprintf("string %q", x)
	case json.Number:
		return "out of range " + string(x)
	}
	return fmt.Sprintf("%T", v)
}

func labelValue(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return string(x)
	case bool:
		return strconv.FormatBool(x)
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

// rowTime reads the time of a row from its time key (or the usual ones).
func rowTime(obj map[string]any, key string) (time.Time, bool) {
	keys := timeKeys
	if key != "" {
		keys = []string{key}
	}
	for _, k := range keys {
		v, ok := upstream.Lookup(obj, k)
		if !ok || v == nil {
			continue
		}
		switch x := v.(type) {
		case string:
			for _, layout := range timeLayouts {
				if t, err := time.ParseInLocation(layout, x, time.UTC); err == nil {
					return t, true
				}
			}
		case json.Number:
			if f, ok := number(x); ok && f > 0 {
				if f > 1e11 { // milliseconds
					return time.UnixMilli(int64(f)).UTC(), true
				}
				return time.Unix(int64(f), 0).UTC(), true
			}
		}
	}
	return time.Time{}, false
}
