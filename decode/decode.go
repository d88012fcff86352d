package decode

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
)

// Sample is one value of one family, before it becomes a metric: the
// field it came from, its labels of its own and the value, scaled.
type Sample struct {
	Field *config.Field
	// Extra are the row, constant and key labels; nil for none, so that
	// most samples are 24 bytes.
	Extra *Extra
	Value float64
}

// Extra are a sample's labels of its own, names and values in one order.
type Extra struct{ Names, Values []string }

// ExtraOf is names and values as a sample's Extra: nil for none.
func ExtraOf(names, values []string) *Extra {
	if len(names) == 0 && len(values) == 0 {
		return nil
	}
	return &Extra{names, values}
}

// ExtraNames are the names of the sample's labels of its own.
func (s Sample) ExtraNames() []string {
	if s.Extra == nil {
		return nil
	}
	return s.Extra.Names
}

// ExtraValues are the values of the sample's labels of its own.
func (s Sample) ExtraValues() []string {
	if s.Extra == nil {
		return nil
	}
	return s.Extra.Values
}

// Answer is what one answer says about a tuple.
type Answer struct {
	Samples []Sample
	// RowTime is the newest row that gave a value, Newest the newest row,
	// Interval the mean spacing of rows.
	RowTime, Newest time.Time
	Interval        time.Duration
	// Step is the smallest spacing between rows and Weekdays the UTC
	// weekdays they fall on (bit i: time.Weekday i) since Oldest: what a
	// series without a window learns its cadence from.
	Step       time.Duration
	Weekdays   uint8
	Oldest     time.Time
	Block      float64
	HasBlock   bool
	Deprecated bool
	// Problems are bad values skipped (a string where a number belongs).
	Problems []string
	// Page says the items counted are one page of more (paginated).
	Page string
	// Over says the answer held more series than the tuple's limit; the
	// first limit are served.
	Over string
	// FieldsDropped is the most numeric fields outside the catalog a row
	// held beyond max_fields (never made samples), FieldsOver its sentence.
	FieldsDropped int
	FieldsOver    string
	// Future counts the rows dated too far after now (LatestAt), left out
	// of everything above; FutureAt is the newest of them.
	Future   int
	FutureAt time.Time
	// Shape is where the rows and their time were found; HasShape is
	// false when the answer held no rows.
	Shape    Shape
	HasShape bool
}

type row struct {
	obj  map[string]any
	time time.Time
}

// reading is an answer being read.
type reading struct {
	Answer
	labels  []string
	timeKey string
	// moreProblems counts the problems past maxProblems.
	moreProblems int
}

// readRows finds the rows of an answer, newest first, with their times,
// and fills what the answer says beside its values. Rows dated after
// until (when it is set) are left out and counted (LatestAt).
func readRows(root any, t *config.Tuple, defaultRows string, until time.Time) ([]row, *reading, error) {
	// What the entry says of the payload (not the catalog's guesses): a
	// pinned shape must hold.
	pin := cmp.Or(t.Entry, &noEntry)
	list, at, err := FindRows(root, pin.Rows, t.Rows(), defaultRows)
	if err != nil {
		return nil, nil, err
	}
	if obj, ok := root.(map[string]any); ok && pin.Rows == "" && at != "." && !carriesFields(list, t.Fields) && carriesFields([]any{obj}, t.Fields) {
		// The object is the row; the list it holds (its top analysts, say)
		// carries none of the series' fields.
		list, at = []any{obj}, "."
	}
	d := &reading{}
	m, _ := Lookup(root, "status.message")
	s, _ := m.(string)
	d.Deprecated = strings.EqualFold(strings.TrimSpace(s), "deprecated")
	rootObj, _ := root.(map[string]any)
	rows := make([]row, 0, len(list))
	timeKey := ""
	for i, item := range list {
		obj, ok := item.(map[string]any)
		if !ok {
			d.Problems = append(d.Problems, fmt.Sprintf("row %d is not an object", i))
			continue
		}
		r := row{obj: obj}
		key, tm, ok := FindTimeKey(obj, pin.TimeKey, t.TimeKey())
		if !ok && rootObj != nil {
			// Rows of a list may take their time from the answer around them.
			key, tm, ok = FindTimeKey(rootObj, pin.TimeKey, t.TimeKey())
		}
		if ok {
			r.time = tm
			if timeKey == "" {
				timeKey = key
			}
		}
		rows = append(rows, r)
	}
	if pin.TimeKey != "" && len(rows) > 0 && timeKey == "" {
		return nil, nil, fmt.Errorf("no row has a time under %q (time_key: %s is set in the configuration)", pin.TimeKey, pin.TimeKey)
	}
	labels, labelsFrom := labelSources(rows, t, pin.LabelFields != nil)
	rows, countedBy, skipped := countItems(rows, t, labels)
	d.Problems = append(d.Problems, skipped...)
	if countedBy != "" {
		d.Page = paginated(rootObj, len(list))
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].time.After(rows[j].time) })
	if !until.IsZero() {
		future := 0
		for future < len(rows) && rows[future].time.After(until) {
			future++
		}
		if future > 0 {
			d.Future, d.FutureAt = future, rows[0].time
			rows = rows[future:]
		}
	}
	if len(rows) > 0 {
		d.Newest = rows[0].time
		if n := len(rows); !rows[n-1].time.IsZero() {
			d.Oldest = rows[n-1].time
			if n > 1 {
				d.Interval = rows[0].time.Sub(rows[n-1].time) / time.Duration(n-1)
			}
		}
		for i, r := range rows {
			if r.time.IsZero() {
				break
			}
			d.Weekdays |= 1 << r.time.UTC().Weekday()
			if i > 0 {
				if gap := rows[i-1].time.Sub(r.time); gap > 0 && (d.Step == 0 || gap < d.Step) {
					d.Step = gap
				}
			}
		}
		if b, ok := Number(rows[0].obj["blockheight"]); ok {
			d.Block, d.HasBlock = b, true
		}
		d.Shape, d.HasShape = Shape{Rows: at, TimeKey: timeKey, CountedBy: countedBy, LabelsFrom: labelsFrom,
			Expected: countedBy == "" && labelsFrom == "" && (at == t.Rows() || t.Rows() == "" && at == defaultRows) &&
				(timeKey == t.TimeKey() || t.TimeKey() == "" && timeKey != "")}, true
	}
	d.labels, d.timeKey = labels, timeKey
	return rows, d, nil
}

// noEntry pins nothing, for a tuple without an entry.
var noEntry config.Entry

// rowRules is what reading the rows of one answer takes from the tuple,
// made once per answer (History reads its rows one at a time).
type rowRules struct {
	skip map[string]bool
	// most is the tuple's limit: at most that many series told apart by
	// a label (one per analyst), the first in the answer's order.
	most int
	// fieldLimit is max_fields: the first numeric fields outside the
	// catalog by name become families, the rest are counted.
	fieldLimit int
	// named are the fields outside the catalog named so far (the naming
	// rule, config/naming.go), whichever row they came in.
	named map[string]*config.Field
}

func newRowRules(t *config.Tuple, labelsFrom []string, timeKey string) *rowRules {
	skip := map[string]bool{"blockheight": true, t.TimeKey(): true, timeKey: true}
	for _, k := range TimeKeys {
		skip[k] = true
	}
	for _, l := range labelsFrom {
		skip[l] = true
	}
	most, _ := strconv.Atoi(t.Query().Get("limit"))
	return &rowRules{skip: skip, most: most, fieldLimit: t.Entry.FieldLimit(), named: map[string]*config.Field{}}
}

// collect walks rows newest first, keeping the first usable value of every
// (label values, field) pair; labels are read from the fields labelsFrom
// names.
func (d *reading) collect(rows []row, t *config.Tuple, labelsFrom []string, rr *rowRules) {
	skip, most, fieldLimit := rr.skip, rr.most, rr.fieldLimit
	seen := map[string]bool{}
	groups, dropped := map[string]bool{}, 0
	derived := map[string]*config.Field{}
	for _, r := range rows {
		labels := make([]string, len(labelsFrom))
		for i, l := range labelsFrom {
			labels[i] = LabelValue(r.obj[l])
		}
		group := strings.Join(labels, "\xff")
		if most > 0 && len(labelsFrom) > 0 && !groups[group] {
			if len(groups) >= most {
				dropped++
				continue
			}
			groups[group] = true
		}
		over := 0
		names := make([]string, 0, len(r.obj))
		for name := range r.obj {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			if skip[name] {
				continue
			}
			f := t.Fields[name]
			if f == nil {
				if !t.AllNumeric {
					continue
				}
				if f = derived[name]; f == nil {
					if _, isNumber := Number(r.obj[name]); !isNumber {
						// No family is made for it. A string or a number out
						// of range is bad data, as add says; else no value.
						switch v := r.obj[name]; v.(type) {
						case string, json.Number:
							d.problem(fmt.Sprintf("field %s is not a finite number (%s)", name, describe(v)))
						}
						continue
					}
					if len(derived) >= fieldLimit {
						over++
						continue
					}
					if f = rr.named[name]; f == nil {
						f = t.DerivedField(name) // the naming rule (config/naming.go)
						rr.named[name] = f
					}
					derived[name] = f
				}
			}
			key := group + "\xff" + name
			if seen[key] {
				continue
			}
			n := len(d.Samples)
			d.add(r.obj[name], name, f, t, labels)
			if len(d.Samples) > n {
				seen[key] = true
				if r.time.After(d.RowTime) {
					d.RowTime = r.time
				}
			}
		}
		d.FieldsDropped = max(d.FieldsDropped, over)
	}
	if dropped > 0 {
		d.Over = fmt.Sprintf("the answer holds %d more rows than limit=%d asks for; the first %d are served", dropped, most, most)
	}
	if d.moreProblems > 0 {
		d.Problems = append(d.Problems, fmt.Sprintf("%d more values are not finite numbers", d.moreProblems))
	}
	if d.FieldsDropped > 0 {
		d.FieldsOver = fmt.Sprintf("a row holds %d numeric fields outside the catalog beyond max_fields=%d; the first %d by name are served (list the fields wanted under fields:, or raise max_fields)",
			d.FieldsDropped, fieldLimit, fieldLimit)
	}
}

// add turns one field value into samples: a number, or an object of
// numbers when the field has a key label. Null means "no value in this
// row"; a string or a non-finite number is bad data for that field.
func (d *reading) add(v any, name string, f *config.Field, t *config.Tuple, labels []string) {
	if v == nil {
		return
	}
	if obj, isObj := v.(map[string]any); isObj {
		if f.KeyLabel == "" {
			return // nested objects are not values unless a key label says so
		}
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			x, ok := Number(obj[k])
			if !ok {
				if obj[k] != nil {
					d.problem(fmt.Sprintf("field %s.%s is not a finite number", name, k))
				}
				continue
			}
			d.Samples = append(d.Samples, newSample(f, t, labels, x, f.KeyLabel, k))
		}
		return
	}
	switch v.(type) {
	case bool, []any:
		return
	}
	x, ok := Number(v)
	if !ok {
		d.problem(fmt.Sprintf("field %s is not a finite number (%s)", name, describe(v)))
		return
	}
	d.Samples = append(d.Samples, newSample(f, t, labels, x, "", ""))
}

// maxProblems bounds the problems an answer lists one by one; the rest
// are counted.
const maxProblems = 100

// problem adds a problem, or counts it past maxProblems.
func (d *reading) problem(msg string) {
	if len(d.Problems) < maxProblems {
		d.Problems = append(d.Problems, msg)
		return
	}
	d.moreProblems++
}

func newSample(f *config.Field, t *config.Tuple, rowLabels []string, v float64, keyLabel, key string) Sample {
	var names, values []string
	names = append(names, t.LabelFields()...)
	values = append(values, rowLabels...)
	for _, k := range slices.Sorted(maps.Keys(f.Labels)) {
		names = append(names, k)
		values = append(values, f.Labels[k])
	}
	if keyLabel != "" {
		names = append(names, keyLabel)
		values = append(values, key)
	}
	return Sample{Field: f, Extra: ExtraOf(names, values), Value: v * f.Scale}
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

// LabelValue renders a field of a row as a label value.
func LabelValue(v any) string {
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

// carriesFields says whether any row holds one of the fields; false for
// a series that reads every numeric field (no list).
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
