package plan

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// current is the answer in the dialect the provider's client reads today.
const current = `{
  "plan": {"name": "PROFESSIONAL"},
  "apiEndpoint": {
    "btc": {
      "market-indicator": {"mvrv": {"day": "P0D"}, "sopr": {"day": "P3Y", "hour": "P1Y", "limit": 1000}},
      "exchange-flows": {"reserve": {"day": "P0D", "hour": "P1Y", "block": "P7D", "note": "not a duration"}}
    },
    "eth": {"market-data": {"price-ohlcv": {"day": "P1Y", "min": "PT12H"}}},
    "statics": ["/v1/btc/status/entity-list", "/v1/discovery/endpoints"]
  },
  "apiRateLimit": {"token": 1000, "window": "hour"}
}`

// older is the same plan in the older dialect: the windows one level
// down, under "window", beside a limit; and wrapped in the data API's
// envelope, which the provider's data answers come in.
const older = `{
  "status": {"code": 200, "message": "success"},
  "result": {"data": {
    "plan": {"name": "PROFESSIONAL"},
    "apiEndpoint": {
      "btc": {
        "market-indicator": {"mvrv": {"window": {"day": "P0D"}, "limit": 1000},
                             "sopr": {"window": {"day": "P3Y", "hour": "P1Y"}, "limit": 1000}},
        "exchange-flows": {"reserve": {"window": {"day": "P0D", "hour": "P1Y", "block": "P7D"}, "limit": 100}}
      },
      "eth": {"market-data": {"price-ohlcv": {"window": {"day": "P1Y", "min": "PT12H"}}}},
      "statics": [{"path": "/v1/btc/status/entity-list"}, "/v1/discovery/endpoints"]
    },
    "apiRateLimit": {"token": "1000", "window": "Hour"}
  }}
}`

func mustParse(t *testing.T, s string) *Plan {
	t.Helper()
	p, err := Parse([]byte(s))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return p
}

func TestParseBothDialects(t *testing.T) {
	a, b := mustParse(t, current), mustParse(t, older)
	for name, p := range map[string]*Plan{"current": a, "older": b} {
		if p.Name != "PROFESSIONAL" {
			t.Errorf("%s: name %q", name, p.Name)
		}
		if got := strings.Join(p.PathsListed(), " "); got != "/v1/btc/exchange-flows/reserve /v1/btc/market-indicator/mvrv /v1/btc/market-indicator/sopr /v1/eth/market-data/price-ohlcv" {
			t.Errorf("%s: paths %s", name, got)
		}
		if got := strings.Join(p.WindowsOf("/v1/btc/exchange-flows/reserve"), ","); got != "block,day,hour" {
			t.Errorf("%s: reserve windows %s (the note that is not a duration must be ignored)", name, got)
		}
		if d, ok := p.Depth("/v1/eth/market-data/price-ohlcv", "min"); !ok || d != (Duration{Clock: 12 * time.Hour}) {
			t.Errorf("%s: min depth %v %v", name, d, ok)
		}
		if p.RateLimit != (RateLimit{Token: 1000, Window: "hour"}) {
			t.Errorf("%s: rate limit %+v", name, p.RateLimit)
		}
		if got := strings.Join(p.Statics, " "); got != "/v1/btc/status/entity-list /v1/discovery/endpoints" {
			t.Errorf("%s: statics %s", name, got)
		}
		if len(p.Notes) != 0 {
			t.Errorf("%s: notes %q", name, p.Notes)
		}
	}
	if !a.Equal(b) {
		t.Errorf("the two dialects read to different plans:\n%+v\n%+v", a, b)
	}
}

func TestMarshalRoundTrip(t *testing.T) {
	p := mustParse(t, older)
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var q Plan
	if err := json.Unmarshal(b, &q); err != nil {
		t.Fatalf("reading back %s: %v", b, err)
	}
	if !p.Equal(&q) {
		t.Errorf("round trip changed the plan:\n%+v\n%+v", p, &q)
	}
	bad := &Plan{Paths: map[string]Windows{"/v2/x": {}}}
	if _, err := json.Marshal(bad); err == nil || !strings.Contains(err.Error(), `"/v2/x" is not /v1/{asset}/{category}/{metric}`) {
		t.Errorf("a path of another shape: %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{``, "the plan answer: want a JSON object, got nothing"},
		{`[]`, "the plan answer: want a JSON object, got a list"},
		{`{"plan": `, "the plan answer: want a JSON object, got malformed JSON"},
		{`{"a": 1} {"b": 2}`, "the plan answer: more than one JSON value"},
		{`{"status": {"code": 200}}`, "the plan answer holds none of plan, apiEndpoint, apiRateLimit: keys status"},
		{`{"result": []}`, "the plan answer's result: want a JSON object, got a list"},
		{`{"data": "x"}`, "the plan answer's data: want a JSON object, got a string"},
		{`{"plan": {"name": 3}}`, "plan.name: want a string, got a number"},
		{`{"plan": [1]}`, "plan: want a JSON object, got a list"},
		{`{"apiEndpoint": []}`, "apiEndpoint: want a JSON object, got a list"},
		{`{"apiEndpoint": {"btc": "x"}}`, "apiEndpoint.btc: want a JSON object, got a string"},
		{`{"apiEndpoint": {"btc": {"market-data": 1}}}`, "apiEndpoint.btc.market-data: want a JSON object, got a number"},
		{`{"apiEndpoint": {"btc": {"market-data": {"price": ["day"]}}}}`, "apiEndpoint.btc.market-data.price: want a JSON object, got a list"},
		{`{"apiEndpoint": {"btc": {"m": {"p": {"window": {"day": "P1D"}, "x": 1}}}, "eth": {"m": {"p": {"window": "day"}}}}}`, ""},
		{`{"apiEndpoint": {"statics": {"a": 1}}}`, "apiEndpoint.statics: want a list of paths, got an object"},
		{`{"apiRateLimit": 5}`, "apiRateLimit: want a JSON object, got a number"},
		{`{"apiRateLimit": {"token": "many"}}`, `apiRateLimit.token: want a whole number of requests, got "many"`},
		{`{"apiRateLimit": {"token": -1}}`, `apiRateLimit.token: want a whole number of requests, got -1`},
		{`{"apiRateLimit": {"token": 1.5}}`, `apiRateLimit.token: want a whole number of requests, got 1.5`},
		{`{"apiRateLimit": {"token": true}}`, `apiRateLimit.token: want a whole number, got a boolean`},
		{`{"apiRateLimit": {"window": 3}}`, `apiRateLimit.window: want a word (day, hour, minute), got a number`},
	} {
		_, err := Parse([]byte(c.in))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.in, err)
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
			t.Errorf("%s:\n got %v\nwant %s", c.in, err, c.want)
		}
	}
}

func TestParseNotes(t *testing.T) {
	p := mustParse(t, `{"plan": "custom", "apiEndpoint": {
		"b/c": {"m": {"x": {"day": "P1D"}}},
		"btc": {"m": {"bare": {"limit": 10}, "odd": {"day": "one year", "hour": "P1Y"}}},
		"statics": ["/ok", 3, "nope"]},
		"apiRateLimit": {"token": 10, "window": "fortnight"}}`)
	if p.Name != "custom" {
		t.Errorf("a plan given as a string: %q", p.Name)
	}
	want := []string{
		`apiEndpoint.b/c.m.x skipped: "b/c" holds "/"`,
		"apiEndpoint.btc.m.bare lists no window with a history depth: /v1/btc/m/bare is read at any window",
		"apiEndpoint.statics[1] skipped: not a path but a number",
		`apiEndpoint.statics[2] skipped: "nope" does not start with /`,
		`apiRateLimit.window "fortnight" is not a window this exporter knows`,
	}
	if len(p.Notes) != len(want) {
		t.Fatalf("notes %q", p.Notes)
	}
	for i, w := range want {
		if !strings.HasPrefix(p.Notes[i], w) {
			t.Errorf("note %d: %q, want %q", i, p.Notes[i], w)
		}
	}
	if got := strings.Join(p.WindowsOf("/v1/btc/m/odd"), ","); got != "hour" {
		t.Errorf("a window whose depth is not a duration is ignored: %s", got)
	}
	if p.RateLimit.Known() || p.RateLimit.PerDay() != 0 {
		t.Errorf("a rate limit per an unknown window cannot be spent: %+v", p.RateLimit)
	}
	if r := p.Check("/v1/btc/m/bare", "min", time.Time{}, time.Now()); r != nil {
		t.Errorf("a path listed with no window: %v", r)
	}
}
