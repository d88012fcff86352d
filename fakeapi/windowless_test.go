package fakeapi

import (
	"encoding/json"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// windowlessTargets are every Indicator and Analyst Consensus answer that
// carries a time in some dialect, asked with keys every plan accepts.
var windowlessTargets = []string{
	"/indicator/api/equities/KRX:005930/pbr-band?limit=5",
	"/indicator/api/equities/NASDAQ:AAPL/pbr-band?limit=3&order=asc",
	"/consensus/consensus?asset=bitcoin",
	"/consensus/consensus?asset=eth&days=4",
	"/consensus/analyst-views?asset=ethereum",
	"/consensus/calls?asset=solana",
	"/consensus/analysts/bitvane",
	"/consensus/analysts/bitvane/calls?asset=btc&days=20",
}

// body serves target from a fresh server of o at t and returns the parsed
// JSON, numbers kept as json.Number.
func bodyAt(t *testing.T, o Options, at time.Time, target string) any {
	t.Helper()
	o.Now = func() time.Time { return at }
	rec := get(t, New(o), target)
	if rec.Code != 200 {
		t.Fatalf("%s: HTTP %d %s", target, rec.Code, rec.Body)
	}
	var v any
	d := json.NewDecoder(strings.NewReader(rec.Body.String()))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// dropTimes removes every time member from a decoded answer.
func dropTimes(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if !slices.Contains(timeKeys, k) {
				out[k] = dropTimes(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = dropTimes(e)
		}
		return out
	}
	return v
}

var dateLike = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}`)

// timesIn lists the members of v that date something: a time key, or a
// string or number that reads as a date or a Unix time of this decade.
// Free text (an analyst's post) is not a time.
func timesIn(v any, path string) []string {
	var out []string
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if slices.Contains(timeKeys, k) {
				out = append(out, path+"."+k)
			}
			if k != "text" {
				out = append(out, timesIn(e, path+"."+k)...)
			}
		}
	case []any:
		for _, e := range x {
			out = append(out, timesIn(e, path+"[]")...)
		}
	case string:
		if dateLike.MatchString(x) {
			out = append(out, path+"="+x)
		}
	case json.Number:
		if n, err := x.Int64(); err == nil && n > 1.5e9 && (n < 2e9 || n > 1.5e12 && n < 2e12) {
			out = append(out, path+"="+x.String())
		}
	}
	return out
}

// Timeless answers carry no time in either dialect, and otherwise the
// dialect's answer member for member: the same numbers.
func TestTimelessCarriesNoTime(t *testing.T) {
	for _, d := range Dialects {
		for _, target := range windowlessTargets {
			timed := bodyAt(t, Options{Dialect: d}, t0, target)
			bare := bodyAt(t, Options{Dialect: d, Timeless: true}, t0, target)
			if got := timesIn(bare, ""); len(got) > 0 {
				t.Errorf("dialect %s, %s: times left: %v", d, target, got)
			}
			if len(timesIn(timed, "")) == 0 {
				t.Errorf("dialect %s, %s: the timed answer has no time to take out", d, target)
			}
			if !reflect.DeepEqual(bare, dropTimes(timed)) {
				t.Errorf("dialect %s, %s:\n timeless %v\n timed    %v", d, target, bare, timed)
			}
		}
	}
	s, _ := newTestServer(Options{Timeless: true, IndicatorToken: "k"})
	if rec := get(t, s, "/indicator/api/equities/KRX:005930/pbr-band"); rec.Code != 401 {
		t.Errorf("timeless: HTTP %d without a key", rec.Code)
	}
	consensusError(t, get(t, s, "/consensus/consensus?asset=dogecoin"), 400, "UNKNOWN_ASSET")
}

// A consensus row is published once a day, after its day closes, at a
// time of the asset's own: a poll a second before sees the day before, in
// every variant, and the number that changes is Revisions' value.
func TestConsensusPublishedOnceADay(t *testing.T) {
	s := New(Options{})
	from := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	for _, asset := range []string{"bitcoin", "ethereum", "solana", "ripple"} {
		target := "/consensus/consensus?asset=" + asset
		revs, err := s.Revisions(target, from, from.AddDate(0, 0, 5))
		if err != nil {
			t.Fatal(err)
		}
		if len(revs) != 6 || !revs[0].Day.Equal(from.AddDate(0, 0, -2)) {
			t.Fatalf("%s: %d revisions from %v, want 6 from two days before", asset, len(revs), revs[0].Day)
		}
		times := map[time.Duration]bool{}
		for i, r := range revs[1:] {
			prev := revs[i]
			if !r.Day.Equal(prev.Day.AddDate(0, 0, 1)) || day(r.At) != r.Day.AddDate(0, 0, 1) {
				t.Errorf("%s: revision %v published at %v, want the day after it", asset, r.Day, r.At)
			}
			times[r.At.Sub(r.Day).Truncate(time.Hour)] = true
			for _, o := range []Options{{}, {Dialect: DialectB}, {Timeless: true}, {Dialect: DialectB, Timeless: true}} {
				for _, c := range []struct {
					at   time.Time
					want Revision
				}{{r.At.Add(-time.Second), prev}, {r.At, r}} {
					if got := scoreOf(t, bodyAt(t, o, c.at, target)); got != c.want.Value {
						t.Errorf("%s at %v (%+v): score %v, want %v (row of %v)", asset, c.at, o, got, c.want.Value, c.want.Day)
					}
				}
			}
			if a := bodyAt(t, Options{}, r.At, target).(map[string]any)["data"].([]any)[0].(map[string]any); a["date"] != r.Day.Format(time.DateOnly) {
				t.Errorf("%s at %v: newest row %v, want %v", asset, r.At, a["date"], r.Day)
			}
		}
		if len(times) > 2 {
			t.Errorf("%s: published at %v: not about one time of day", asset, times)
		}
	}
}

// scoreOf reads the newest score of a consensus answer in any variant.
func scoreOf(t *testing.T, v any) float64 {
	t.Helper()
	m := v.(map[string]any)
	if rows, ok := m["data"].([]any); ok {
		m = rows[0].(map[string]any)
	}
	return num(t, m["score"])
}

// The price-to-book band has a row per trading day, each published like
// a data API day row: a poll a second before sees the trading day before,
// with or without times; nothing changes over a weekend.
func TestBandPublishedPerTradingDay(t *testing.T) {
	s := New(Options{})
	const target = "/indicator/api/equities/NASDAQ:AAPL/pbr-band"
	from := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC) // a Friday
	revs, err := s.Revisions(target, from, from.AddDate(0, 0, 7))
	if err != nil {
		t.Fatal(err)
	}
	var days []string
	for _, r := range revs {
		days = append(days, r.Day.Format("Mon 02"))
	}
	if want := "Thu 19 Fri 20 Mon 23 Tue 24 Wed 25 Thu 26"; strings.Join(days, " ") != want {
		t.Fatalf("revisions %s, want %s", strings.Join(days, " "), want)
	}
	for i, r := range revs[1:] {
		if want := r.Day.Add(24*time.Hour + defaultLags["day"]); !r.At.Equal(want) {
			t.Errorf("row of %v published at %v, want %v", r.Day, r.At, want)
		}
		for _, o := range []Options{{}, {Dialect: DialectB}, {Timeless: true}, {Dialect: DialectB, Timeless: true}} {
			for _, c := range []struct {
				at   time.Time
				want Revision
			}{{r.At.Add(-time.Second), revs[i]}, {r.At, r}} {
				if got := closeOf(t, bodyAt(t, o, c.at, target)); got != c.want.Value {
					t.Errorf("at %v (%+v): close %v, want %v (row of %v)", c.at, o, got, c.want.Value, c.want.Day)
				}
			}
		}
	}
	if _, err := s.Revisions("/consensus/calls?asset=bitcoin", from, from); err == nil {
		t.Error("Revisions of an answer it does not model")
	}
}

// closeOf reads the newest close of a band answer in any variant.
func closeOf(t *testing.T, v any) float64 {
	t.Helper()
	m := v.(map[string]any)
	rows, ok := m["data"].([]any)
	if !ok {
		rows = m["items"].([]any)
	}
	return num(t, rows[0].(map[string]any)["close"])
}
