//go:build !race

package daytwo

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// crossing is a level of the signal pack (docs/signals.md) that a series
// of the run can cross, written again apart from the rules: the oracle of
// the pack's firings. The other signals read series the run does not
// configure, or its netflow against 14 days of history a week does not
// have: they must stay silent.
type crossing struct {
	alert, path, query, field string
	crosses                   func(prev, cur float64) bool
}

var crossings = []crossing{
	{"OnchainExchangeReserveFallingFast", "/v1/btc/exchange-flows/reserve", "exchange=binance", "reserve",
		func(p, c float64) bool { return p > 0 && (c-p)/p < -0.05 }},
	{"OnchainExchangeReserveRisingFast", "/v1/btc/exchange-flows/reserve", "exchange=binance", "reserve",
		func(p, c float64) bool { return p > 0 && (c-p)/p > 0.05 }},
	{"OnchainMVRVUndervalued", "/v1/btc/market-indicator/mvrv", "", "mvrv",
		func(p, c float64) bool { return c < 1 && p >= 1 }},
	{"OnchainMVRVTopZone", "/v1/btc/market-indicator/mvrv", "", "mvrv",
		func(p, c float64) bool { return c > 3.7 && p <= 3.7 }},
}

// crossed is a day row that crosses a level: when the fake first shows it
// (without the delays the run injects).
type crossed struct {
	alert   string
	row     time.Time
	visible time.Time
}

// dayRows are the day rows of a path the fake serves now, oldest first:
// their start and field's value.
func (r *run) dayRows(path, query, field string) ([]time.Time, []float64) {
	t := r.t
	t.Helper()
	u := r.up.Srv.URL + path + "?window=day&limit=40"
	if query != "" {
		u += "&" + query
	}
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	req.Header.Set("Authorization", "Bearer "+proKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Result struct {
			Data []map[string]any `json:"data"`
		} `json:"result"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %d %v", u, resp.StatusCode, err)
	}
	var rows []time.Time
	var values []float64
	for i := len(body.Result.Data) - 1; i >= 0; i-- { // the newest first
		d := body.Result.Data[i]
		day, err := time.Parse(time.DateOnly, fmt.Sprint(d["date"]))
		v, ok := d[field].(float64)
		if err != nil || !ok {
			t.Fatalf("%s: a row without a date or %s: %v", u, field, d)
		}
		rows, values = append(rows, day), append(values, v)
	}
	return rows, values
}

// levelsCrossed are the rows of the run's series that cross a level of
// the pack, the fake showing them after from (the first fill: a rule
// fires on a row against the one served before it).
func (r *run) levelsCrossed(from time.Time) []crossed {
	var out []crossed
	for _, c := range crossings {
		rows, values := r.dayRows(c.path, c.query, c.field)
		for i := 1; i < len(rows); i++ {
			visible := r.up.Fake.VisibleAt(c.path, "day", "", rows[i])
			if visible.After(from) && c.crosses(values[i-1], values[i]) {
				out = append(out, crossed{alert: c.alert, row: rows[i], visible: visible})
			}
		}
	}
	return out
}

// signalsMatch holds the pack's firings to the oracle's crossings: each
// firing on a row that crosses (fired within late of the row shown: the
// run holds some rows back for hours), each crossing shown early enough
// before the run's end fired once.
func (r *run) signalsMatch(fired []firing, pack map[string]bool, end time.Time, late time.Duration) (firings, crossings int) {
	t := r.t
	want := r.levelsCrossed(r.times[0])
	used := make([]bool, len(want))
	for _, f := range fired {
		if !pack[f.name] {
			continue
		}
		firings++
		found := false
		for i, c := range want {
			if !used[i] && c.alert == f.name && !f.from.Before(c.visible) && f.from.Before(c.visible.Add(late)) {
				used[i], found = true, true
				t.Logf("the signal pack on the %s row, shown %s, that crosses its level: %s", c.row.Format(time.DateOnly), c.visible.UTC().Format("Jan 2 15:04"), f)
				break
			}
		}
		if !found {
			t.Errorf("the signal pack fired on no row that crosses its level: %s", f)
		}
	}
	for i, c := range want {
		if !used[i] && c.visible.Add(late).Before(end) {
			t.Errorf("%s: the %s row, shown %s, crosses its level and raised nothing", c.alert, c.row.Format(time.DateOnly), c.visible.UTC().Format("Jan 2 15:04"))
		}
	}
	return firings, len(want)
}
