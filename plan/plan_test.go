package plan

import (
	"maps"
	"slices"
	"testing"
	"time"
)

func TestDuration(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		in       string
		want     Duration
		earliest time.Time
		back     string
	}{
		{"P0D", Duration{}, time.Time{}, "P0D"},
		{"P1D", Duration{Days: 1}, now.AddDate(0, 0, -1), "P1D"},
		{"P7D", Duration{Days: 7}, now.AddDate(0, 0, -7), "P7D"},
		{"P2W", Duration{Days: 14}, now.AddDate(0, 0, -14), "P14D"},
		{"P1Y", Duration{Years: 1}, now.AddDate(-1, 0, 0), "P1Y"},
		{"P3Y", Duration{Years: 3}, now.AddDate(-3, 0, 0), "P3Y"},
		{"P1Y6M", Duration{Years: 1, Months: 6}, now.AddDate(-1, -6, 0), "P1Y6M"},
		{"PT12H", Duration{Clock: 12 * time.Hour}, now.Add(-12 * time.Hour), "PT12H"},
		{"P1DT1H30M5S", Duration{Days: 1, Clock: time.Hour + 30*time.Minute + 5*time.Second}, now.Add(-25*time.Hour - 30*time.Minute - 5*time.Second), "P1DT1H30M5S"},
		{"PT0S", Duration{}, time.Time{}, "P0D"},
	} {
		d, err := ParseDuration(c.in)
		if err != nil || d != c.want {
			t.Errorf("%s: %+v %v", c.in, d, err)
			continue
		}
		if got := d.Earliest(now); !got.Equal(c.earliest) {
			t.Errorf("%s: earliest %v, want %v", c.in, got, c.earliest)
		}
		if d.String() != c.back {
			t.Errorf("%s: written back as %s", c.in, d)
		}
	}
	for _, in := range []string{"", "P", "1D", "PT", "P1", "PD", "P1.5D", "P-1D", "P1D1Y", "P1H", "PT1D", "P99999999999Y", "P1DT", "day"} {
		if d, err := ParseDuration(in); err == nil {
			t.Errorf("%q read as %+v", in, d)
		}
	}
}

func TestCheck(t *testing.T) {
	p := mustParse(t, current)
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		path, window string
		from         time.Time
		want         string
	}{
		{"/v1/btc/market-indicator/mvrv", "day", time.Time{}, ""},
		{"/v1/btc/market-indicator/mvrv", "", time.Time{}, ""},
		{"/v1/btc/market-indicator/mvrv", "day", time.Date(2009, 1, 3, 0, 0, 0, 0, time.UTC), ""},
		{"/v1/btc/market-indicator/mvrv", "hour", time.Time{}, "your plan (PROFESSIONAL) reads /v1/btc/market-indicator/mvrv at day only, not at hour"},
		{"/v1/btc/exchange-flows/reserve", "min", time.Time{}, "your plan (PROFESSIONAL) reads /v1/btc/exchange-flows/reserve at block, day and hour only, not at min"},
		{"/v1/btc/market-indicator/sopr", "hour", now.AddDate(-1, 0, 1), ""},
		{"/v1/btc/market-indicator/sopr", "hour", now.AddDate(-2, 0, 0), "your plan (PROFESSIONAL) reads the history of /v1/btc/market-indicator/sopr at hour back to P1Y only, not from 2024-11-27"},
		{"/v1/btc/market-indicator/nupl", "day", time.Time{}, "your plan (PROFESSIONAL) does not include /v1/btc/market-indicator/nupl"},
		{"/v1/btc/status/entity-list", "", time.Time{}, ""},
		{"/v1/discovery/endpoints", "", time.Time{}, ""},
		{"/v2/indicator/valuation/mvrv-z-score", "day", time.Time{}, ""},
		{"/v1/my/discovery/endpoints", "", time.Time{}, ""},
	} {
		r := p.Check(c.path, c.window, c.from, now)
		got := ""
		if r != nil {
			got = r.Error()
		}
		if got != c.want {
			t.Errorf("%s at %q from %v:\n got %s\nwant %s", c.path, c.window, c.from, got, c.want)
		}
	}
	if r := (&Plan{}).Check("/v1/btc/a/b", "day", time.Time{}, now); r == nil || r.Error() != "your plan does not include /v1/btc/a/b" || r.Reason != NotListed {
		t.Errorf("an unnamed plan: %v", r)
	}
	if e, ok := p.Earliest("/v1/eth/market-data/price-ohlcv", "day", now); !ok || !e.Equal(now.AddDate(-1, 0, 0)) {
		t.Errorf("earliest %v %v", e, ok)
	}
	if _, ok := p.Earliest("/v1/eth/market-data/price-ohlcv", "hour", now); ok {
		t.Error("earliest of a window the plan does not allow")
	}
	if e, ok := p.Earliest("/v2/x", "day", now); !ok || !e.IsZero() {
		t.Error("earliest of a path the plan does not speak of")
	}
}

func TestRateLimit(t *testing.T) {
	for _, c := range []struct {
		r      RateLimit
		perDay float64
		text   string
	}{
		{RateLimit{1000, "hour"}, 24000, "1000 per hour"},
		{RateLimit{10, "minute"}, 14400, "10 per minute"},
		{RateLimit{50000, "day"}, 50000, "50000 per day"},
		{RateLimit{5, "second"}, 432000, "5 per second"},
		{RateLimit{5, "fortnight"}, 0, "5 per fortnight"},
		{RateLimit{}, 0, "none given"},
	} {
		if c.r.PerDay() != c.perDay || c.r.String() != c.text {
			t.Errorf("%+v: %v a day, %q", c.r, c.r.PerDay(), c.r.String())
		}
	}
}

// PerDay is the allowance as requests a day; 0 when not Known.
func (r RateLimit) PerDay() float64 {
	if !r.Known() {
		return 0
	}
	return float64(r.Token) / r.Period().Seconds() * 86400
}

// PathsListed are the paths the plan lists with windows, sorted.
func (p *Plan) PathsListed() []string { return slices.Sorted(maps.Keys(p.Paths)) }
