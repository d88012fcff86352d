package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/onchain-exporter/onchain_exporter/internal/text"
)

// The keys of the plan answer.
const (
	keyPlan      = "plan"
	keyEndpoints = "apiEndpoint"
	keyRateLimit = "apiRateLimit"
	keyStatics   = "statics"
	keyWindow    = "window" // the older dialect's metric → {window: {day: P1Y}}
)

// Parse reads the answer of GET /v1/my/discovery/endpoints: the object
// itself, or the data API's envelope around it (result.data, or data).
// It reads both dialects of a metric: windows mapped to depths
// ({"day": "P1Y", "hour": "P7D"}), and the older one nesting them one
// level down ({"window": {"day": "P1Y"}, "limit": 1000}). A key that does
// not map to an ISO 8601 duration is ignored, as the provider says; an
// asset, category or metric that cannot be a path segment is skipped with
// a note. An answer of another shape is an error naming where.
func Parse(body []byte) (*Plan, error) {
	obj, err := object(body, "the plan answer")
	if err != nil {
		return nil, err
	}
	obj, err = unwrap(obj)
	if err != nil {
		return nil, err
	}
	if obj[keyPlan] == nil && obj[keyEndpoints] == nil && obj[keyRateLimit] == nil {
		return nil, fmt.Errorf("the plan answer holds none of %s, %s, %s: keys %s",
			keyPlan, keyEndpoints, keyRateLimit, strings.Join(slices.Sorted(maps.Keys(obj)), ", "))
	}
	p := &Plan{Paths: map[string]Windows{}}
	if p.Name, err = planName(obj[keyPlan]); err != nil {
		return nil, err
	}
	if err := p.readEndpoints(obj[keyEndpoints]); err != nil {
		return nil, err
	}
	if p.RateLimit, err = p.readRateLimit(obj[keyRateLimit]); err != nil {
		return nil, err
	}
	return p, nil
}

// UnmarshalJSON reads a plan as Parse does, so a plan stored as its answer
// (MarshalJSON) is read back whole.
func (p *Plan) UnmarshalJSON(b []byte) error {
	q, err := Parse(b)
	if err != nil {
		return err
	}
	*p = *q
	return nil
}

// object decodes one JSON object, numbers kept as written; its values are
// parts of raw, not copies (an answer at its cap is read without a copy
// of its endpoints).
func object(raw []byte, where string) (map[string]json.RawMessage, error) {
	var parts map[string]part
	if json.Unmarshal(raw, &parts) == nil && parts != nil {
		obj := make(map[string]json.RawMessage, len(parts))
		for k, v := range parts {
			obj[k] = json.RawMessage(v)
		}
		return obj, nil
	}
	// Not one object: the decoder says what it is instead.
	var obj map[string]json.RawMessage
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&obj); err != nil || obj == nil {
		return nil, fmt.Errorf("%s: want a JSON object, got %s", where, describe(raw, err))
	}
	if d.More() {
		return nil, fmt.Errorf("%s: more than one JSON value", where)
	}
	return obj, nil
}

// part is a value of an object, kept as a part of the JSON it is read
// from: json.Unmarshal hands an Unmarshaler a part of its input.
type part []byte

// UnmarshalJSON keeps b.
func (p *part) UnmarshalJSON(b []byte) error {
	*p = b
	return nil
}

// describe names what a value is instead of the object wanted.
func describe(raw []byte, err error) string {
	t := bytes.TrimSpace(raw)
	switch {
	case len(t) == 0:
		return "nothing"
	case t[0] == '[':
		return "a list"
	case t[0] == '"':
		return "a string"
	case bytes.Equal(t, []byte("null")):
		return "null"
	case t[0] == '{' && err != nil:
		return "malformed JSON (" + shorten(err.Error()) + ")"
	case t[0] == '{':
		return "an object"
	case t[0] == '-' || (t[0] >= '0' && t[0] <= '9'):
		return "a number"
	case bytes.Equal(t, []byte("true")) || bytes.Equal(t, []byte("false")):
		return "a boolean"
	}
	return "malformed JSON (" + shorten(err.Error()) + ")"
}

func shorten(s string) string {
	s = strings.TrimPrefix(s, "json: ")
	if len(s) > 120 {
		s = s[:120] + "..."
	}
	return s
}

// unwrap takes the plan object out of the data API's envelope when the
// answer comes in one: {"status": ..., "result": {"data": {...}}} or
// {"data": {...}}.
func unwrap(obj map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	if obj[keyPlan] != nil || obj[keyEndpoints] != nil || obj[keyRateLimit] != nil {
		return obj, nil
	}
	where := "data"
	inner := obj["data"]
	if r := obj["result"]; r != nil {
		res, err := object(r, "the plan answer's result")
		if err != nil {
			return nil, err
		}
		where, inner = "result.data", res["data"]
	}
	if inner == nil {
		return obj, nil
	}
	return object(inner, "the plan answer's "+where)
}

// planName reads plan.name (or a plan given as a bare string), as
// text.Outside makes it: the name is the provider's text and goes into
// the plan_info label, the logs and the page, where 128 bytes say any
// real plan's name and a U+202E or an ESC in it must not act.
func planName(raw json.RawMessage) (string, error) {
	const most = 128 // bytes of the name kept
	if raw == nil || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		obj, err := object(raw, keyPlan)
		if err != nil {
			return "", err
		}
		if name := obj["name"]; name != nil && string(name) != "null" && json.Unmarshal(name, &s) != nil {
			return "", fmt.Errorf("%s.name: want a string, got %s", keyPlan, describe(name, nil))
		}
	}
	return text.Outside(strings.TrimSpace(s), most), nil
}

// readStatics reads the list of paths always allowed: strings, or objects
// with a path.
func (p *Plan) readStatics(raw json.RawMessage, where string) error {
	if string(raw) == "null" {
		return nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return fmt.Errorf("%s: want a list of paths, got %s", where, describe(raw, nil))
	}
	for i, it := range items {
		var s string
		if json.Unmarshal(it, &s) != nil {
			var o struct {
				Path string `json:"path"`
			}
			if json.Unmarshal(it, &o) != nil || o.Path == "" {
				p.Notes = append(p.Notes, fmt.Sprintf("%s[%d] skipped: not a path but %s", where, i, describe(it, nil)))
				continue
			}
			s = o.Path
		}
		s = strings.TrimSpace(s)
		if !strings.HasPrefix(s, "/") {
			p.Notes = append(p.Notes, fmt.Sprintf("%s[%d] skipped: %q does not start with /", where, i, s))
			continue
		}
		if !slices.Contains(p.Statics, s) {
			p.Statics = append(p.Statics, s)
		}
	}
	slices.Sort(p.Statics)
	return nil
}

// readRateLimit reads apiRateLimit: {token: 1000, window: "hour"}.
func (p *Plan) readRateLimit(raw json.RawMessage) (RateLimit, error) {
	var r RateLimit
	if raw == nil || string(raw) == "null" {
		return r, nil
	}
	obj, err := object(raw, keyRateLimit)
	if err != nil {
		return r, err
	}
	if t := obj["token"]; t != nil && string(t) != "null" {
		var n json.Number
		var s string
		switch {
		case json.Unmarshal(t, &n) == nil:
		case json.Unmarshal(t, &s) == nil:
			n = json.Number(strings.TrimSpace(s))
		default:
			return r, fmt.Errorf("%s.token: want a whole number, got %s", keyRateLimit, describe(t, nil))
		}
		v, err := strconv.ParseInt(n.String(), 10, 64)
		if err != nil || v < 0 || v > 1<<40 {
			return r, fmt.Errorf("%s.token: want a whole number of requests, got %s", keyRateLimit, t)
		}
		r.Token = int(v)
	}
	if w := obj["window"]; w != nil && string(w) != "null" {
		if err := json.Unmarshal(w, &r.Window); err != nil {
			return r, fmt.Errorf("%s.window: want a word (day, hour, minute), got %s", keyRateLimit, describe(w, nil))
		}
		r.Window = strings.ToLower(strings.TrimSpace(r.Window))
		if r.Period() == 0 {
			p.Notes = append(p.Notes, fmt.Sprintf("%s.window %q is not a window this exporter knows (%s): the rate limit is not spent by",
				keyRateLimit, r.Window, "second, minute, hour, day, week, month"))
		}
	}
	return r, nil
}

// badSegment says why a name cannot be one segment of a path, or "".
func badSegment(s string) string {
	if s == "" {
		return "is empty"
	}
	if i := strings.IndexFunc(s, func(r rune) bool {
		return r <= ' ' || r == 0x7f || strings.ContainsRune("/?#%{}\\", r)
	}); i >= 0 {
		return fmt.Sprintf("holds %q", s[i:i+1])
	}
	return ""
}
