package collector

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/testtool"
)

const indicatorConfig = `
indicator:
  url: "{{URL}}/indicator"
  token_env: T
  metrics:
    - path: /api/equities/{equity}/pbr-band
      equity: [KRX:005930, NASDAQ:AAPL]
`

// bandRows asks the fake directly for the rows the exporter reads, and
// reads them by the dialect's own known shape (not by the exporter's
// detection): rows under data with a date (A), under items with a Unix
// millisecond timestamp (B). Rows come back newest first, with a date.
func bandRows(t *testing.T, e *env, d fakeapi.Dialect, equity string) []map[string]any {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/indicator/api/equities/"+equity+"/pbr-band?limit=5&order=desc", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b struct {
		Data  []map[string]any `json:"data"`
		Items []map[string]any `json:"items"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&b); err != nil {
		t.Fatal(err)
	}
	rows := b.Data
	if d == fakeapi.DialectB {
		rows = b.Items
		for _, r := range rows {
			r["date"] = time.UnixMilli(int64(r["timestamp"].(float64))).UTC().Format(time.DateOnly)
		}
	}
	if len(rows) < 2 {
		t.Fatalf("%s: %d rows", equity, len(rows))
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i]["date"].(string) > rows[j]["date"].(string) })
	e.fake.ResetCalls()
	return rows
}

// newestNonNull is the field's value in the newest row that has one.
func newestNonNull(rows []map[string]any, get func(map[string]any) any) (float64, string) {
	for _, r := range rows {
		if v, ok := get(r).(float64); ok {
			return v, r["date"].(string)
		}
	}
	return 0, ""
}

// The latest row's close price, BPS and PBR, and one band family with a
// multiple label; a newest row with nulls (NASDAQ:AAPL) gives way to the
// row before it field by field. The same in every dialect of the payload.
func TestIndicatorExposition(t *testing.T) {
	eachDialect(t, func(t *testing.T, d fakeapi.Dialect) {
		e := newEnv(t, indicatorConfig, fakeapi.Options{Dialect: d, IndicatorToken: testToken})
		rows := map[string][]map[string]any{}
		for _, eq := range []string{"KRX:005930", "NASDAQ:AAPL"} {
			rows[eq] = bandRows(t, e, d, eq)
		}
		if aapl := rows["NASDAQ:AAPL"][0]; aapl["bps"] != nil || aapl["close"] == nil {
			t.Fatalf("the fake's newest NASDAQ:AAPL row no longer has a null BPS: %v", aapl)
		}
		body := e.scrape("10")
		if got := e.fake.Calls("indicator"); got != 2 {
			t.Errorf("%d calls, want 2", got)
		}

		var want []string
		for eq, rs := range rows {
			exchange, security, _ := strings.Cut(eq, ":")
			labels := fmt.Sprintf(`equity=%q,exchange_code=%q`, eq, exchange)
			tail := fmt.Sprintf(`security_code=%q}`, security)
			for field, family := range map[string]string{"close": "equity_close_price", "bps": "equity_book_value_per_share", "pbr": "equity_pbr_ratio"} {
				v, _ := newestNonNull(rs, func(r map[string]any) any { return r[field] })
				want = append(want, fmt.Sprintf("onchain_%s{%s,%s %s", family, labels, tail, formatValue(v)))
			}
			bands, _ := rs[len(rs)-1]["bands"].(map[string]any)
			for m := range bands {
				v, _ := newestNonNull(rs, func(r map[string]any) any { return r["bands"].(map[string]any)[m] })
				want = append(want, fmt.Sprintf("onchain_equity_pbr_band_price{%s,multiple=%q,%s %s", labels, m, tail, formatValue(v)))
			}
			_, newest := newestNonNull(rs, func(r map[string]any) any { return r["close"] })
			day, _ := time.Parse(time.DateOnly, newest)
			if got := seriesValue(body, "onchain_data_timestamp_seconds", "api", "indicator", "equity", eq); got != formatValue(float64(day.Unix())) {
				t.Errorf("%s: timestamp %q, want the newest row's %s", eq, got, newest)
			}
		}
		sort.Strings(want)
		if got := lines(body, "onchain_equity_"); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("exposition:\n got %s\nwant %s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if n := len(lines(body, "onchain_equity_pbr_band_price")); n != 10 {
			t.Errorf("%d band series, want 5 multiples x 2 equities", n)
		}
		checkMetrics(t, body)
	})
}

// A key the Indicator API rejects (a plan below Pro, or an invalid key):
// every series says so, the error is counted, and the key is not sent
// again for 30 minutes or until the configuration is reloaded.
func TestIndicatorRejectedKeyIsNotRetried(t *testing.T) {
	eachDialect(t, func(t *testing.T, d fakeapi.Dialect) {
		for _, tc := range []struct {
			name string
			opts fakeapi.Options
			code string
		}{
			{"low plan", fakeapi.Options{Dialect: d, IndicatorToken: "pro-key", IndicatorLowPlanToken: testToken}, "plan_required"},
			{"invalid", fakeapi.Options{Dialect: d, IndicatorToken: "pro-key"}, "unauthorized"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				e := newEnv(t, indicatorConfig, tc.opts)
				body := e.scrape("10")
				first := e.fake.Calls("indicator")
				if first < 1 || first > 2 {
					t.Fatalf("%d calls, want at most one per tuple", first)
				}
				if got := seriesValue(body, "onchain_exporter_api_errors_total", "api", "indicator", "code", tc.code); got != formatValue(float64(first)) {
					t.Errorf("api_errors_total{code=%s} = %q, want %d", tc.code, got, first)
				}
				for _, eq := range []string{"KRX:005930", "NASDAQ:AAPL"} {
					if got := seriesValue(body, "onchain_exporter_query_success", "api", "indicator", "equity", eq); got != "0" {
						t.Errorf("%s: query_success %q", eq, got)
					}
				}
				if got := seriesValue(body, "onchain_exporter_api_paused", "api", "indicator", "code", tc.code); got != "1" {
					t.Errorf("api_paused = %q", got)
				}
				if len(lines(body, "onchain_equity_")) != 0 {
					t.Error("values without a good answer")
				}
				for _, d := range []time.Duration{time.Minute, 10 * time.Minute, 18 * time.Minute} {
					e.clock.Add(d)
					e.scrape("10")
					if got := e.fake.Calls("indicator"); got != first {
						t.Fatalf("the rejected key was sent again within 30 min (%d calls)", got)
					}
				}
				e.clock.Add(2 * time.Minute)
				e.scrape("10")
				after := e.fake.Calls("indicator")
				if after == first {
					t.Error("no call after the 30 min back-off")
				}

				if err := e.exp.ApplyConfig(testtool.Config(t, e.srv.URL, indicatorConfig)); err != nil {
					t.Fatal(err)
				}
				body = e.scrape("10")
				if e.fake.Calls("indicator") == after {
					t.Error("a reload did not try the key again")
				}
				if got := seriesValue(body, "onchain_exporter_api_paused", "api", "indicator", "code", tc.code); got != "1" {
					t.Errorf("after the reload's failed try api_paused = %q", got)
				}
			})
		}
	})
}
