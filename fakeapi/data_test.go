package fakeapi

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// seriesURLs is one valid request per served data endpoint.
var seriesURLs = []string{
	"/v1/btc/market-data/open-interest?exchange=binance",
	"/v1/erc20/exchange-flows/addresses-count?token=usdt&exchange=binance",
	"/v1/eth/fund-data/digital-asset-holdings?symbol=ethe",
	"/v1/eth/network-data/addresses-count?",
	"/v1/erc20/exchange-flows/reserve?token=link&exchange=okx",
	"/v1/xrp/market-data/capitalization?",
	"/v1/trx/defi/launchpad-tokens?",
	"/v1/btc/network-data/supply?",
	"/v1/btc/network-indicator/pnl-utxo?",
	"/v1/xrp/network-data/velocity?",
	"/v1/btc/exchange-flows/netflow?exchange=binance",
	"/v1/btc/exchange-flows/reserve?exchange=coinbase_advanced",
	"/v2/network/events-count?asset=usdt",
	"/v2/indicator/valuation/mvrv-z-score?asset=btc",
}

func TestRowsLatestFirstAndLimit(t *testing.T) {
	s, _ := newTestServer(Options{})
	for _, u := range seriesURLs {
		e := rowsOf(t, s, u+"&limit=25")
		if e.window != "day" || e.message != "success" {
			t.Errorf("%s: window %q message %q", u, e.window, e.message)
		}
		if len(e.rows) != 25 {
			t.Fatalf("%s: %d rows, want 25", u, len(e.rows))
		}
		for i := 1; i < len(e.rows); i++ {
			if a, b := rowTime(t, e.rows[i-1]), rowTime(t, e.rows[i]); a.Sub(b) != 24*time.Hour {
				t.Fatalf("%s: row %d at %v follows %v", u, i, b, a)
			}
		}
		if got := rowTime(t, e.rows[0]); !got.Equal(time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)) {
			t.Errorf("%s: latest row %v, want 2026-11-21", u, got)
		}
		if n := len(rowsOf(t, s, u).rows); n != 100 {
			t.Errorf("%s: default limit gave %d rows, want 100", u, n)
		}
		// from keeps the order and bounds the oldest row.
		e = rowsOf(t, s, u+"&from=20261115&limit=100")
		if len(e.rows) != 7 || rowTime(t, e.rows[6]).Format(time.DateOnly) != "2026-11-15" {
			t.Errorf("%s with from: %d rows ending %v", u, len(e.rows), e.rows[len(e.rows)-1])
		}
	}
}

func TestLimitBounds(t *testing.T) {
	s, _ := newTestServer(Options{})
	for _, c := range []struct {
		url  string
		code int
	}{
		{"/v1/btc/network-data/supply?limit=0", 400},
		{"/v1/btc/network-data/supply?limit=abc", 400},
		{"/v1/btc/network-data/supply?limit=100001", 400},
		{"/v1/btc/network-data/supply?limit=100000&window=hour&from=20261120", 200},
		{"/v2/network/events-count?asset=usdt&limit=10001", 400},
		{"/v2/network/events-count?asset=usdt&limit=10000&window=block&from=20261122T000000", 200},
		{"/v1/btc/network-data/supply?format=csv", 400},
		{"/v1/btc/network-data/supply?format=json", 200},
	} {
		rec := get(t, s, c.url)
		if rec.Code != c.code {
			t.Errorf("%s: HTTP %d, want %d", c.url, rec.Code, c.code)
		}
		if e := parseEnvelope(t, rec); e.code != c.code {
			t.Errorf("%s: status.code %d, want %d", c.url, e.code, c.code)
		}
	}
}

func TestWindowValidation(t *testing.T) {
	s, _ := newTestServer(Options{})
	allowed := map[string][]string{
		"/v1/btc/market-data/open-interest?":              {"day", "hour", "min"},
		"/v1/erc20/exchange-flows/addresses-count?":       {"day", "hour", "block"},
		"/v1/eth/fund-data/digital-asset-holdings?":       {"day"},
		"/v1/eth/network-data/addresses-count?":           {"day", "hour", "10min", "block"},
		"/v1/erc20/exchange-flows/reserve?":               {"day", "hour", "block"},
		"/v1/xrp/market-data/capitalization?":             {"day", "hour"},
		"/v1/trx/defi/launchpad-tokens?":                  {"day"},
		"/v1/btc/network-data/supply?":                    {"day", "hour", "block"},
		"/v1/btc/network-indicator/pnl-utxo?":             {"day"},
		"/v1/xrp/network-data/velocity?":                  {"day"},
		"/v2/network/events-count?asset=usdc&":            {"block", "10min", "hour", "day"},
		"/v2/indicator/valuation/mvrv-z-score?asset=eth&": {"day"},
	}
	for prefix, ok := range allowed {
		for _, w := range []string{"day", "hour", "10min", "min", "block", "week"} {
			want := 400
			if slices.Contains(ok, w) {
				want = 200
			}
			rec := get(t, s, prefix+"limit=3&window="+w)
			e := parseEnvelope(t, rec)
			if rec.Code != want || e.code != want {
				t.Errorf("%swindow=%s: HTTP %d status.code %d, want %d", prefix, w, rec.Code, e.code, want)
			}
			if want == 400 && e.message != "bad_request" {
				t.Errorf("%swindow=%s: message %q", prefix, w, e.message)
			}
			if want == 200 && e.window != w {
				t.Errorf("%swindow=%s: result.window %q", prefix, w, e.window)
			}
		}
	}
}

func TestParameterValidation(t *testing.T) {
	s, _ := newTestServer(Options{})
	for _, c := range []struct {
		url  string
		code int
		msg  string
	}{
		{"/v1/btc/market-data/open-interest?exchange=nasdaq", 400, "bad_request"},
		{"/v1/btc/market-data/open-interest?exchange=gate_io&symbol=btc_usdt", 200, "success"},
		{"/v1/btc/market-data/open-interest?symbol=eth_usd", 400, "bad_request"},
		{"/v1/erc20/exchange-flows/reserve?token=notatoken", 400, "bad_request"},
		{"/v1/erc20/exchange-flows/reserve?token=shib&exchange=kraken", 200, "success"},
		{"/v1/eth/fund-data/digital-asset-holdings?symbol=nope", 400, "bad_request"},
		{"/v2/network/events-count", 400, "bad_request"},
		{"/v2/network/events-count?asset=usdt_eth", 400, "bad_request"},
		{"/v2/network/events-count?asset=pyusd&chain=tron", 400, "bad_request"},
		{"/v2/network/events-count?asset=pyusd&chain=ethereum", 200, "success"},
		{"/v2/indicator/valuation/mvrv-z-score?asset=doge", 400, "bad_request"},
		{"/v1/btc/network-data/supply?from=yesterday", 400, "bad_request"},
		{"/v1/doge/network-data/supply", 404, "not_found"},
		{"/v1/btc/network-data", 404, "not_found"},
		{"/v2/unknown/thing", 404, "not_found"},
		{"/v3/btc/network-data/supply", 404, "not_found"},
	} {
		rec := get(t, s, c.url)
		e := parseEnvelope(t, rec)
		if rec.Code != c.code || e.code != c.code || e.message != c.msg {
			t.Errorf("%s: HTTP %d, status %d %q; want %d %q", c.url, rec.Code, e.code, e.message, c.code, c.msg)
		}
	}
}

func TestNullRows(t *testing.T) {
	s, _ := newTestServer(Options{})
	e := rowsOf(t, s, "/v1/btc/market-data/open-interest?exchange=bybit&limit=3")
	if v, ok := e.rows[0]["open_interest"]; !ok || v != nil {
		t.Errorf("bybit newest open_interest = %v (present %v), want null", v, ok)
	}
	if num(t, e.rows[1]["open_interest"]) <= 0 {
		t.Error("bybit second row has no value")
	}
	e = rowsOf(t, s, "/v1/btc/market-data/open-interest?exchange=binance&limit=1")
	if e.rows[0]["open_interest"] == nil {
		t.Error("binance newest open_interest is null")
	}
	e = rowsOf(t, s, "/v1/btc/network-indicator/pnl-utxo?limit=2")
	if v, ok := e.rows[0]["loss_percent"]; !ok || v != nil {
		t.Errorf("pnl newest loss_percent = %v", v)
	}
	if p := num(t, e.rows[1]["loss_percent"]) + num(t, e.rows[1]["profit_percent"]); p < 99.99 || p > 100.01 {
		t.Errorf("profit+loss percent = %v", p)
	}
	e = rowsOf(t, s, "/v1/xrp/market-data/capitalization?limit=20&window=hour")
	for _, r := range e.rows {
		if v, ok := r["thermo_cap"]; !ok || v != nil {
			t.Fatalf("thermo_cap = %v (present %v)", v, ok)
		}
		for _, k := range []string{"market_cap", "realized_cap", "average_cap", "delta_cap"} {
			num(t, r[k])
		}
	}
	// A to before the newest row shows only published values.
	e = rowsOf(t, s, "/v1/btc/market-data/open-interest?exchange=bybit&limit=1&to=20261120")
	if e.rows[0]["open_interest"] == nil {
		t.Error("older bybit row is null")
	}
}

var (
	dayRe      = regexp.MustCompile(`^\d{4}-\d\d-\d\d$`)
	dateTimeRe = regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$`)
)

func TestTimeKeys(t *testing.T) {
	s, _ := newTestServer(Options{})
	check := func(u, key string, re *regexp.Regexp, block bool, step time.Duration) {
		t.Helper()
		e := rowsOf(t, s, u)
		for i, r := range e.rows {
			v, _ := r[key].(string)
			if !re.MatchString(v) {
				t.Errorf("%s: %s = %q", u, key, r[key])
			}
			other := map[string]string{"date": "datetime", "datetime": "date"}[key]
			if _, ok := r[other]; ok {
				t.Errorf("%s: row has both date and datetime", u)
			}
			_, hasHeight := r["blockheight"]
			if hasHeight != block {
				t.Errorf("%s: blockheight present = %v", u, hasHeight)
			}
			if i > 0 {
				if d := rowTime(t, e.rows[i-1]).Sub(rowTime(t, r)); d != step {
					t.Errorf("%s: step %v, want %v", u, d, step)
				}
				if block && num(t, e.rows[i-1]["blockheight"])-num(t, r["blockheight"]) != 1 {
					t.Errorf("%s: block heights not consecutive", u)
				}
			}
		}
	}
	check("/v1/btc/network-data/supply?limit=5", "date", dayRe, false, 24*time.Hour)
	check("/v1/btc/network-data/supply?limit=5&window=hour", "date", dateTimeRe, false, time.Hour)
	check("/v1/btc/network-data/supply?limit=5&window=block", "date", dateTimeRe, true, 10*time.Minute)
	check("/v1/eth/network-data/addresses-count?limit=5&window=10min", "date", dateTimeRe, false, 10*time.Minute)
	check("/v1/eth/network-data/addresses-count?limit=5&window=block", "date", dateTimeRe, true, 12*time.Second)
	check("/v1/erc20/exchange-flows/reserve?limit=5&window=block", "date", dateTimeRe, true, 12*time.Second)
	check("/v1/btc/market-data/open-interest?limit=5&window=min", "date", dateTimeRe, false, time.Minute)
	check("/v2/network/events-count?asset=usdt&limit=5", "datetime", dateTimeRe, false, 24*time.Hour)
	check("/v2/network/events-count?asset=usdt&limit=5&window=hour", "datetime", dateTimeRe, false, time.Hour)
	check("/v2/network/events-count?asset=usdt&limit=5&window=block", "datetime", dateTimeRe, true, 12*time.Second)
	check("/v2/indicator/valuation/mvrv-z-score?asset=btc&limit=5", "datetime", dateTimeRe, false, 24*time.Hour)

	// v2 day rows start at midnight; block heights count from genesis.
	e := rowsOf(t, s, "/v2/indicator/valuation/mvrv-z-score?asset=btc&limit=1")
	if e.rows[0]["datetime"] != "2026-11-21 00:00:00" {
		t.Errorf("v2 day datetime %v", e.rows[0]["datetime"])
	}
	e = rowsOf(t, s, "/v1/btc/network-data/supply?limit=1&window=block")
	bt := time.Date(2026, 11, 22, 10, 10, 0, 0, time.UTC)
	want := float64(bt.Sub(time.Date(2009, 1, 3, 0, 0, 0, 0, time.UTC)) / (10 * time.Minute))
	if e.rows[0]["date"] != "2026-11-22 10:10:00" || num(t, e.rows[0]["blockheight"]) != want {
		t.Errorf("btc block row %v, want height %v", e.rows[0], want)
	}
}

func TestFromToAndBlockHeights(t *testing.T) {
	s, _ := newTestServer(Options{})
	e := rowsOf(t, s, "/v1/btc/network-data/supply?window=hour&from=20261122T030000&to=20261122T063000")
	if len(e.rows) != 4 || e.rows[0]["date"] != "2026-11-22 06:00:00" || e.rows[3]["date"] != "2026-11-22 03:00:00" {
		t.Errorf("hour from/to rows: %v", e.rows)
	}
	last := rowsOf(t, s, "/v1/btc/network-data/supply?window=block&limit=1").rows[0]
	h := int64(num(t, last["blockheight"]))
	u := fmt.Sprintf("/v1/btc/network-data/supply?window=block&from=%d&to=%d", h-4, h-2)
	e = rowsOf(t, s, u)
	if len(e.rows) != 3 || int64(num(t, e.rows[0]["blockheight"])) != h-2 || int64(num(t, e.rows[2]["blockheight"])) != h-4 {
		t.Errorf("block from/to rows: %v", e.rows)
	}
	if e = rowsOf(t, s, "/v1/btc/network-data/supply?from=20300101"); len(e.rows) != 0 {
		t.Errorf("future from gave %d rows", len(e.rows))
	}
}

func TestDataAuth(t *testing.T) {
	s, _ := newTestServer(Options{DataToken: "secret"})
	const want = `{"status":{"code":401,"message":"unauthorized"},"result":{}}`
	for _, c := range []struct {
		url  string
		hdr  []string
		code int
	}{
		{"/v1/btc/network-data/supply", nil, 401},
		{"/v1/btc/network-data/supply", []string{"Authorization", "Bearer wrong"}, 401},
		{"/v1/btc/network-data/supply", []string{"Authorization", "secret"}, 401},
		{"/v1/btc/network-data/supply?api_key=wrong", nil, 401},
		{"/v1/discovery/endpoints", nil, 401},
		{"/v2/discovery/endpoints", nil, 401},
		{"/v1/btc/network-data/supply", []string{"Authorization", "Bearer secret"}, 200},
		{"/v1/btc/network-data/supply?api_key=secret", nil, 200},
		{"/v2/network/events-count?asset=usdt", []string{"Authorization", "Bearer secret"}, 200},
		{"/v2/discovery/endpoints?api_key=secret", nil, 200},
	} {
		rec := get(t, s, c.url, c.hdr...)
		if rec.Code != c.code {
			t.Errorf("%s %v: HTTP %d, want %d", c.url, c.hdr, rec.Code, c.code)
		}
		if c.code == 401 && strings.TrimSpace(rec.Body.String()) != want {
			t.Errorf("401 body %s", rec.Body)
		}
	}
}

func TestDeprecatedExchange(t *testing.T) {
	s, _ := newTestServer(Options{})
	for _, w := range []string{"day", "hour"} {
		rec := get(t, s, "/v1/btc/market-data/open-interest?exchange=ftx&limit=3&window="+w)
		e := parseEnvelope(t, rec)
		if rec.Code != 200 || e.code != 200 || e.message != "deprecated" || len(e.rows) != 3 {
			t.Fatalf("ftx %s: HTTP %d status %d %q, %d rows", w, rec.Code, e.code, e.message, len(e.rows))
		}
		if d := rowTime(t, e.rows[0]).Format(time.DateOnly); d != "2022-11-11" {
			t.Errorf("ftx %s newest row on %s", w, d)
		}
	}
}

func TestDeterminism(t *testing.T) {
	a, _ := newTestServer(Options{})
	b, _ := newTestServer(Options{})
	for _, u := range seriesURLs {
		x, y := get(t, a, u+"&limit=50"), get(t, b, u+"&limit=50")
		if x.Body.String() != y.Body.String() {
			t.Errorf("%s differs between servers", u)
		}
	}
	// limit, from, to and format do not change a row's values.
	short := rowsOf(t, a, "/v1/erc20/exchange-flows/reserve?token=usdt&limit=3&format=json")
	long := rowsOf(t, a, "/v1/erc20/exchange-flows/reserve?token=usdt&limit=30&from=20260101&to=20261121T235959")
	for i := range short.rows {
		if fmt.Sprint(short.rows[i]) != fmt.Sprint(long.rows[i]) {
			t.Errorf("row %d: %v vs %v", i, short.rows[i], long.rows[i])
		}
	}
	// Defaults equal explicit values; other parameters change the values.
	x := rowsOf(t, a, "/v1/erc20/exchange-flows/reserve?limit=3")
	y := rowsOf(t, a, "/v1/erc20/exchange-flows/reserve?limit=3&token=usdt&exchange=all_exchange")
	z := rowsOf(t, a, "/v1/erc20/exchange-flows/reserve?limit=3&token=usdt&exchange=binance")
	if fmt.Sprint(x.rows) != fmt.Sprint(y.rows) || fmt.Sprint(y.rows) == fmt.Sprint(z.rows) {
		t.Error("series identity does not follow its parameters")
	}
}

func TestPlausibleValues(t *testing.T) {
	s, _ := newTestServer(Options{})
	within := func(u, field string, lo, hi float64) {
		t.Helper()
		for _, r := range rowsOf(t, s, u).rows {
			if v := num(t, r[field]); v < lo || v > hi {
				t.Errorf("%s: %s = %v outside [%v, %v]", u, field, v, lo, hi)
			}
		}
	}
	within("/v1/btc/market-data/open-interest?exchange=okx&limit=300", "open_interest", 1e9, 5e9)
	within("/v1/btc/network-data/supply?limit=300", "supply_total", 19.5e6, 21e6)
	within("/v2/indicator/valuation/mvrv-z-score?asset=eth&limit=300", "mvrv_ratio_zscore", -1, 7)
	within("/v1/xrp/network-data/velocity?limit=300", "velocity", 0, 1)
	within("/v1/erc20/exchange-flows/reserve?token=usdc&limit=300", "reserve", 1e8, 1e10)
	within("/v1/btc/network-indicator/pnl-utxo?limit=300", "profit_percent", 0, 100)
	e := rowsOf(t, s, "/v1/eth/network-data/addresses-count?limit=20")
	for _, r := range e.rows {
		if v := r["addresses_count_active"].(interface{ String() string }).String(); strings.ContainsAny(v, ".eE") {
			t.Errorf("count %s is not an integer", v)
		}
	}
	if e := rowsOf(t, s, "/v1/eth/exchange-flows/inflow?limit=1"); e.rows[0]["inflow_total"] == nil {
		t.Errorf("generic flow row %v", e.rows[0])
	}
	// A reserve outside the table has the fields of the ERC-20 one, in
	// units of the path's asset, and the spot exchanges of the flows.
	within("/v1/btc/exchange-flows/reserve?exchange=coinbase_advanced&window=hour&limit=300", "reserve", 1e4, 2.3e5)
	within("/v1/btc/exchange-flows/reserve?exchange=coinbase_advanced&window=hour&limit=300", "reserve_usd", 1e9, 2e10)
	within("/v1/btc/exchange-flows/netflow?exchange=coinbase_advanced&limit=300", "netflow_total", -5000, 5000)
	if code := get(t, s, "/v1/btc/market-data/open-interest?exchange=coinbase_advanced").Code; code != 400 {
		t.Errorf("open interest of a spot exchange: HTTP %d, want 400", code)
	}
}
