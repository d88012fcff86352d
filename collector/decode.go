package collector

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
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
	// page says the items counted are one page of more (paginated).
	page string
}

type row struct {
	obj  map[string]any
	time time.Time
}

// shapeSource is what decode asks of the API's client: where its answers
// keep their rows by default, and who hears of the shape they were in.
type shapeSource interface {
	DefaultRows() string
	NoteShape(endpoint, entry string, s upstream.Shape)
}

// decode reads the rows of an answer and takes, per field (and per
// combination of label fields), the newest non-null value. Rows are ordered
// by their time key, not by their position: the API serves them latest
// first, and a payload that does not is read just as well. Where the rows
// and their time are is found in the answer (upstream.FindRows and
// FindTimeKey) unless the entry pins it (rows:, time_key:).
func decode(body []byte, t *config.Tuple, up shapeSource) (*decoded, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var root any
	if err := dec.Decode(&root); err != nil {
		return nil, fmt.Errorf("invalid JSON: %s", upstream.ShortJSONError(err))
	}
	pin := pinsOf(t)
	list, at, err := upstream.FindRows(root, pin.rows, t.Rows, up.DefaultRows())
	if err != nil {
		return nil, err
	}
	if obj, ok := root.(map[string]any); ok && pin.rows == "" && at != "." && !carriesFields(list, t.Fields) && carriesFields([]any{obj}, t.Fields) {
		// One object that is the row and also holds a list (its top
		// analysts, say): the list found carries none of the fields the
		// series reads, the object does.
		list, at = []any{obj}, "."
	}
	d := &decoded{}
	if m, ok := upstream.Lookup(root, "status.message"); ok {
		if s, _ := m.(string); strings.EqualFold(strings.TrimSpace(s), "deprecated") {
			d.deprecated = true
		}
	}
	rootObj, _ := root.(map[string]any)
	rows := make([]row, 0, len(list))
	timeKey := ""
	for i, item := range list {
		obj, ok := item.(map[string]any)
		if !ok {
			d.problems = append(d.problems, fmt.Sprintf("row %d is not an object", i))
			continue
		}
		r := row{obj: obj}
		key, tm, ok := upstream.FindTimeKey(obj, pin.timeKey, t.TimeKey)
		if !ok && rootObj != nil {
			// Rows of a list may take their time from the answer around them.
			key, tm, ok = upstream.FindTimeKey(rootObj, pin.timeKey, t.TimeKey)
		}
		if ok {
			r.time = tm
			if timeKey == "" {
				timeKey = key
			}
		}
		rows = append(rows, r)
	}
	if pin.timeKey != "" && len(rows) > 0 && timeKey == "" {
		return nil, fmt.Errorf("no row has a time under %q (time_key: %s is set in the configuration)", pin.timeKey, pin.timeKey)
	}
	labels, labelsFrom := labelSources(rows, t, pin.labels)
	rows, countedBy, skipped := countItems(rows, t, labels)
	d.problems = append(d.problems, skipped...)
	if countedBy != "" {
		d.page = paginated(rootObj, len(list))
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].time.After(rows[j].time) })
	if len(rows) > 0 {
		d.newest = rows[0].time
		if n := len(rows); n > 1 && !rows[n-1].time.IsZero() {
			d.interval = rows[0].time.Sub(rows[n-1].time) / time.Duration(n-1)
		}
		if b, ok := upstream.Number(rows[0].obj["blockheight"]); ok {
			d.block, d.hasBlock = b, true
		}
		up.NoteShape(endpointOf(t), entryOf(t), upstream.Shape{Rows: at, TimeKey: timeKey, CountedBy: countedBy, LabelsFrom: labelsFrom,
			Expected: countedBy == "" && labelsFrom == "" && (at == t.Rows || t.Rows == "" && at == up.DefaultRows()) &&
				(timeKey == t.TimeKey || t.TimeKey == "" && timeKey != "")})
	}
	d.collect(rows, t, labels, timeKey)
	return d, nil
}

// pins are what the entry itself says of the payload, as opposed to the
// catalog's guesses: a pinned shape must hold.
type pins struct {
	rows, timeKey string
	labels        bool
}

func pinsOf(t *config.Tuple) pins {
	if t.Entry == nil {
		return pins{}
	}
	return pins{rows: t.Entry.Rows, timeKey: t.Entry.TimeKey, labels: t.Entry.LabelFields != nil}
}

func endpointOf(t *config.Tuple) string {
	if t.Entry != nil {
		return t.Entry.Path
	}
	return t.Path
}

func entryOf(t *config.Tuple) string {
	if t.Entry != nil {
		return t.Entry.Key
	}
	return ""
}

// collect walks rows newest first, keeping the first usable value of every
// (label values, field) pair.
// The label fields are read from the row fields labelsFrom names.
func (d *decoded) collect(rows []row, t *config.Tuple, labelsFrom []string, timeKey string) {
	skip := map[string]bool{"blockheight": true, t.TimeKey: true, timeKey: true}
	for _, k := range upstream.TimeKeys {
		skip[k] = true
	}
	for _, l := range labelsFrom {
		skip[l] = true
	}
	seen := map[string]bool{}
	for _, r := range rows {
		labels := make([]string, len(labelsFrom))
		for i, l := range labelsFrom {
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
			x, ok := upstream.Number(obj[k])
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
	x, ok := upstream.Number(v)
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

// carriesFields says whether any of the rows holds one of the fields a
// series reads; false when the series reads every numeric field (no list).
func carriesFields(rows []any, fields map[string]*config.Field) bool {
	return slices.ContainsFunc(rows, func(r any) bool {
		obj, _ := r.(map[string]any)
		return holdsField(obj, fields)
	})
}

// holdsField says whether a row holds one of the fields, null included.
func holdsField(obj map[string]any, fields map[string]*config.Field) bool {
	for name := range fields {
		if _, ok := obj[name]; ok {
			return true
		}
	}
	return false
}
