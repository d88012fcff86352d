package decode

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/onchain-exporter/onchain_exporter/internal/jsonerr"
)

// The Indicator and Analyst Consensus APIs publish no payload samples: an
// answer may be a bare array, rows under some key, or one object that is
// the row. FindRows and FindTimeKey are the one way every caller finds
// rows and their time, unless the configuration pins them.

// rowKeys are the places rows are usually kept, in the order they are tried.
var rowKeys = []string{"data", "result.data", "results", "items"}

// TimeKeys are the keys usually holding a row's time, in the order they
// are tried; never values.
var TimeKeys = []string{"datetime", "date", "timestamp", "time", "ts", "updated_at", "updatedAt",
	"as_of", "asOf", "created_at", "createdAt", "published_at"}

var timeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02 15:04",
	time.DateOnly, "2006-01-02 15:04:05Z07:00", "20060102T150405", "20060102",
	"2006-01-02T15:04Z07:00", "2006-01-02T15:04", "2006-01-02 15:04:05 MST", "2006/01/02", "2006/01/02 15:04:05",
	time.RFC1123, time.RFC1123Z}

// timeShapes are what a value must start with for the layout at the same
// index of timeLayouts to read it, so that time.Parse (which allocates an
// error) is not tried in vain: 'd' a digit, 'A' a letter, any other byte
// itself; with exact, nothing after it.
var timeShapes = []struct {
	prefix string
	exact  bool
}{{"dddd-dd-ddT", false}, {"dddd-dd-ddT", false}, {"dddd-dd-dd ", false}, {"dddd-dd-dd ", false},
	{"dddd-dd-dd", true}, {"dddd-dd-dd ", false}, {"ddddddddT", false}, {"dddddddd", true},
	{"dddd-dd-ddT", false}, {"dddd-dd-ddT", false}, {"dddd-dd-dd ", false}, {"dddd/dd/dd", true}, {"dddd/dd/dd ", false},
	{"A", false}, {"A", false}}

// fits says whether x has the shape a layout of timeShapes needs.
func fits(x, prefix string, exact bool) bool {
	if len(x) < len(prefix) || exact && len(x) != len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		switch c := x[i]; prefix[i] {
		case 'd':
			if c < '0' || c > '9' {
				return false
			}
		case 'A':
			if c|0x20 < 'a' || c|0x20 > 'z' {
				return false
			}
		default:
			if c != prefix[i] {
				return false
			}
		}
	}
	return true
}

// Shape is where an answer held its rows and their time, as dotted paths a
// configuration can pin (rows:, time_key:).
type Shape struct {
	Rows    string // "." for the answer itself
	TimeKey string // "" when no row (nor the answer around them) has a time
	// CountedBy is the field items (one per analyst) were counted by.
	CountedBy string
	// LabelsFrom names labels read from a field of another name
	// ("stance=direction").
	LabelsFrom string
	// Expected says the shape is the configuration's, the catalog's or
	// the API's documented one: nothing was searched for.
	Expected bool
}

// FindRows returns the rows of an answer and the dotted path they were at.
// A pinned path (rows:) must be in the answer. Otherwise it tries the
// answer itself when it is an array, the hints, rowKeys, the object's
// only list of objects, then the object itself when it carries numbers
// (one row). A null where rows belong is no rows, not an error.
func FindRows(root any, pinned string, hints ...string) (rows []any, at string, err error) {
	if pinned != "" {
		node, ok := Lookup(root, pinned)
		if !ok {
			return nil, pinned, fmt.Errorf("no %q in the answer (rows: %s is set in the configuration)", pinned, pinned)
		}
		switch v := node.(type) {
		case []any:
			return v, pinned, nil
		case map[string]any:
			return []any{v}, pinned, nil
		case nil:
			return nil, pinned, nil
		}
		return nil, pinned, fmt.Errorf("%q is %s, not a list of rows (rows: %s is set in the configuration)", pinned, kind(node), pinned)
	}
	if root == nil {
		return nil, ".", nil
	}
	if list, ok := root.([]any); ok {
		return list, ".", nil
	}
	obj, ok := root.(map[string]any)
	if !ok {
		return nil, "", fmt.Errorf("the answer is %s, not rows", kind(root))
	}
	var inner error // why an object at a usual place held no rows
	for _, path := range append(slices.Clip(hints), rowKeys...) {
		if path == "" || path == "." {
			continue
		}
		node, ok := Lookup(obj, path)
		if !ok {
			continue
		}
		switch v := node.(type) {
		case []any:
			return v, path, nil
		case nil:
			return nil, path, nil
		case map[string]any:
			rows, at, err := inObject(v, path)
			if err == nil {
				return rows, at, nil
			}
			if inner == nil {
				inner = err
			}
		}
	}
	rows, at, err = inObject(obj, ".")
	if err != nil && inner != nil {
		return nil, "", inner
	}
	return rows, at, err
}

// inObject finds rows in an object at path: its only list of objects, or
// the object itself when it carries numbers.
func inObject(obj map[string]any, path string) ([]any, string, error) {
	var lists, empty []string
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		list, ok := obj[k].([]any)
		if !ok || !objectsOnly(list) {
			continue
		}
		if len(list) == 0 {
			empty = append(empty, k)
		} else {
			lists = append(lists, k)
		}
	}
	join := func(k string) string {
		if path == "." {
			return k
		}
		return path + "." + k
	}
	if len(lists) == 0 {
		if hasNumbers(obj) {
			return []any{obj}, path, nil
		}
		lists = empty // no rows, but where they would be
	}
	switch {
	case len(lists) == 1:
		return obj[lists[0]].([]any), join(lists[0]), nil
	case len(lists) > 1:
		return nil, "", fmt.Errorf("the answer holds several lists of rows (%s); set rows: to one of them", quoteAll(lists, join))
	}
	return nil, "", fmt.Errorf("no rows in the answer: no list of objects, and no numeric field in %s (set rows: to where they are)", describePath(path))
}

func describePath(path string) string {
	if path == "." {
		return "the object itself"
	}
	return strconv.Quote(path)
}

func quoteAll(keys []string, join func(string) string) string {
	q := make([]string, len(keys))
	for i, k := range keys {
		q[i] = strconv.Quote(join(k))
	}
	return strings.Join(q, ", ")
}

// objectsOnly says whether a list can be rows: objects and nulls only (a
// list of names is a field).
func objectsOnly(list []any) bool {
	for _, it := range list {
		switch it.(type) {
		case map[string]any, nil:
		default:
			return false
		}
	}
	return true
}

// hasNumbers says whether an object carries a number (or a numeric
// string) other than its time.
func hasNumbers(obj map[string]any) bool {
	for k, v := range obj {
		if slices.Contains(TimeKeys, k) {
			continue
		}
		if _, ok := Number(v); ok {
			return true
		}
		if s, ok := v.(string); ok {
			if _, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
				return true
			}
		}
	}
	return false
}

// FindTimeKey returns the key holding the time of a row, and that time. A
// pinned key (time_key:) is the only one read; otherwise the hints, then
// TimeKeys, are tried in order. Values read: see ParseTime.
func FindTimeKey(row map[string]any, pinned string, hints ...string) (key string, t time.Time, ok bool) {
	if pinned != "" {
		return timeAt(row, pinned)
	}
	for _, keys := range [2][]string{hints, TimeKeys} {
		for _, k := range keys {
			if key, t, ok = timeAt(row, k); ok {
				return key, t, true
			}
		}
	}
	return "", time.Time{}, false
}

// timeAt is the time a row holds under the key k, if any.
func timeAt(row map[string]any, k string) (string, time.Time, bool) {
	if k == "" {
		return "", time.Time{}, false
	}
	if v, found := Lookup(row, k); found && v != nil {
		if t, ok := ParseTime(v); ok {
			return k, t, true
		}
	}
	return "", time.Time{}, false
}

// ParseTime reads a time value: dates (2026-11-20, 2026/11/20,
// YYYYMMDD), RFC 3339 (with or without seconds), "YYYY-MM-DD HH:MM:SS"
// (UTC, or with a zone name), RFC 1123, and Unix times in seconds,
// milliseconds or microseconds, as numbers or numeric strings.
func ParseTime(v any) (time.Time, bool) {
	switch x := v.(type) {
	case string:
		x = strings.TrimSpace(x)
		for i, layout := range timeLayouts {
			if !fits(x, timeShapes[i].prefix, timeShapes[i].exact) {
				continue
			}
			if t, err := time.ParseInLocation(layout, x, time.UTC); err == nil {
				return t.UTC(), true
			}
		}
		if f, err := strconv.ParseFloat(x, 64); err == nil {
			return epoch(f)
		}
	case json.Number, float64:
		if f, ok := Number(x); ok {
			return epoch(f)
		}
	}
	return time.Time{}, false
}

// epoch reads a Unix time by its magnitude: seconds up to 1e11 (year
// 5138), then milliseconds, then microseconds. Below 1e8 s (1973) it is
// no time; eight digits are a date, YYYYMMDD.
func epoch(f float64) (time.Time, bool) {
	switch {
	case f >= 19000101 && f <= 99991231 && f == math.Trunc(f):
		t, err := time.ParseInLocation("20060102", strconv.FormatInt(int64(f), 10), time.UTC)
		return t, err == nil
	case f < 1e8 || f >= 1e17:
		return time.Time{}, false
	case f >= 1e14:
		return time.UnixMicro(int64(f)).UTC(), true
	case f >= 1e11:
		return time.UnixMilli(int64(f)).UTC(), true
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)).UTC(), true
}

// Number accepts JSON numbers only, and only finite ones.
func Number(v any) (float64, bool) {
	var f float64
	var err error
	switch x := v.(type) {
	case json.Number:
		f, err = strconv.ParseFloat(string(x), 64)
	case float64:
		f = x
	default:
		return 0, false
	}
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case json.Number, float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// Lookup follows a dotted path through nested objects; "" and "." are the
// root itself.
func Lookup(v any, path string) (any, bool) {
	if path == "" || path == "." {
		return v, true
	}
	for part := range strings.SplitSeq(path, ".") {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = obj[part]; !ok {
			return nil, false
		}
	}
	return v, true
}

// ShortJSONError keeps decoder errors short and free of payload text.
func ShortJSONError(err error) string { return jsonerr.Short(err) }
