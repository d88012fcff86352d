package budget

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
)

func parse(t *testing.T, yml string) *config.Config {
	t.Helper()
	cfg, err := config.Parse("x.yml", []byte(yml), func(string) string { return "token" })
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// brief renders an entry's forecast: key, series (per value of all),
// each window group as window[chain]:series×rows/day=calls(basis), and
// the entry's calls a day.
func brief(e EntryForecast) string {
	var ws []string
	for _, w := range e.Windows {
		name := w.Window
		if w.Chain != "" {
			name += "[" + w.Chain + "]"
		}
		ws = append(ws, fmt.Sprintf("%s:%d×%g=%.1f(%s)", name, w.Series, w.RowsPerDay, w.CallsPerDay, w.Basis))
	}
	per := ""
	if e.PerValue != nil {
		per = " per " + strings.Join(e.PerValue, "×")
	}
	return fmt.Sprintf("%s %d%s %s %.2f", e.Key, e.Series, per, strings.Join(ws, " "), e.CallsPerDay)
}

const head = "data:\n  url: http://127.0.0.1:1\n  token_env: T\n"

func TestForecast(t *testing.T) {
	for _, tc := range []struct {
		name    string
		yml     string
		entries []string
		lists   []string
		total   float64
		unknown int
	}{
		{"every window of the data API", head + `  metrics:
    - path: /v1/btc/market-data/open-interest
      window: [min, hour, day]
      exchange: [binance, bybit]
    - path: /v1/eth/network-data/addresses-count
      window: [10min, block]
    - path: /v1/{asset}/network-data/supply
      asset: btc
      window: block
    - path: /v2/network/events-count
      asset: [usdt, usdc]
      window: block
`, []string{
			// 1440, 24 and 1 rows a day at 1.05 calls per row.
			"data.metrics[0] 6 min:2×1440=3024.0(rows) hour:2×24=50.4(rows) day:2×1=2.1(rows) 3076.50",
			// Ethereum: a block every 12 s, 7200 a day.
			"data.metrics[1] 2 10min:1×144=151.2(rows) block[ethereum]:1×7200=7560.0(rows) 7711.20",
			"data.metrics[2] 1 block[btc]:1×144=151.2(rows) 151.20",
			// events-count counts stablecoins on ethereum, its only chain.
			"data.metrics[3] 2 block[ethereum]:2×7200=15120.0(rows) 15120.00",
		}, nil, 26058.9, 0},

		{"cache_ttl, revalidate and a path outside the catalog", head + `  revalidate: 10m
  metrics:
    - path: /v2/indicator/valuation/mvrv-z-score
      asset: btc
      cache_ttl: 1h
    - path: /v1/xrp/network-data/velocity
    - path: /v1/btc/exchange-flows/netflow
      window: hour
`, []string{
			// cache_ttl wins over revalidate: 24 calls a day.
			"data.metrics[0] 1 day:1×0=24.0(cache_ttl) 24.00",
			// revalidate 10m polls a day series 144 times a day.
			"data.metrics[1] 1 day:1×1=144.0(revalidate) 144.00",
			"data.metrics[2] 1 hour:1×24=144.0(revalidate) 144.00",
		}, []string{config.ListDataV1}, 313, 0},

		{"all counts per value listed; an explicit value beside it is one of them", head + `  metrics:
    - path: /v1/btc/market-data/open-interest
      window: hour
      exchange: [all, binance]
    - path: /v1/erc20/exchange-flows/reserve
      token: all
      exchange: [all, binance]
      window: [day, hour]
`, []string{
			"data.metrics[0] 1 per exchange hour:1×24=25.2(rows) 25.20",
			"data.metrics[1] 2 per token×exchange day:1×1=1.1(rows) hour:1×24=25.2(rows) 26.25",
		}, []string{config.ListDataV1}, 1, 0},

		{"a block spacing not known", head + `  metrics:
    - path: /v1/xrp/network-data/transactions
      window: [block, day]
`, []string{
			"data.metrics[0] 2 block[xrp]:1×0=0.0(unknown) day:1×1=1.1(rows) 1.05",
		}, []string{config.ListDataV1}, 2.05, 1},

		{"no window: a change an hour until learned", `indicator:
  url: http://127.0.0.1:2
  token_env: T
  metrics:
    - path: /api/equities/{equity}/pbr-band
      equity: all
consensus:
  url: http://127.0.0.1:3
  metrics:
    - path: /consensus
      asset: [btc, eth]
    - path: /analysts/top
      asset: btc
      cache_ttl: 1d
`, []string{
			"indicator.metrics[0] 1 per equity :1×24=25.2(no window) 25.20",
			"consensus.metrics[0] 2 :2×24=50.4(no window) 50.40",
			"consensus.metrics[1] 1 :1×0=1.0(cache_ttl) 1.00",
		}, []string{config.ListEquities, config.ListAssets}, 53.4, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Forecast(parse(t, tc.yml))
			var got []string
			var lists []string
			var total float64
			unknown := 0
			for _, a := range r.APIs {
				for _, e := range a.Entries {
					got = append(got, brief(e))
				}
				lists = append(lists, a.Lists...)
				total += a.CallsPerDay
				unknown += a.Unknown
			}
			if strings.Join(got, "\n") != strings.Join(tc.entries, "\n") {
				t.Errorf("entries\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(tc.entries, "\n     "))
			}
			if strings.Join(lists, " ") != strings.Join(tc.lists, " ") {
				t.Errorf("lists %v, want %v", lists, tc.lists)
			}
			if d := total - tc.total; d > 0.01 || d < -0.01 {
				t.Errorf("total %.2f calls a day, want %.2f", total, tc.total)
			}
			if unknown != tc.unknown {
				t.Errorf("%d series of unknown cost, want %d", unknown, tc.unknown)
			}
		})
	}
}

// The forecast against daily_budget and rate_limit, and the plan it
// implies.
func TestForecastAgainstLimits(t *testing.T) {
	for _, tc := range []struct {
		limits          string
		overBudget      bool
		overRate        bool
		cut             bool
		rateLimitPerDay float64
	}{
		// 10 min series: 15 120 calls a day.
		{"  daily_budget: 20000\n", false, false, false, 0},
		{"  daily_budget: 5000\n", true, false, true, 0},
		{"  rate_limit: 11\n", false, false, false, 15840},
		{"  rate_limit: 5\n  daily_budget: 100000\n", false, true, false, 7200},
		// A daily_budget below what rate_limit allows holds the calls.
		{"  rate_limit: 5\n  daily_budget: 7000\n", true, false, true, 7200},
	} {
		cfg := parse(t, head+tc.limits+"  metrics:\n    - path: /v1/btc/market-data/open-interest\n      window: min\n      exchange: [a, b, c, d, e, f, g, h, i, j]\n")
		a := Forecast(cfg).APIs[0]
		if a.OverBudget() != tc.overBudget || a.OverRateLimit() != tc.overRate || a.Allotment.Cut() != tc.cut || a.RateLimitPerDay() != tc.rateLimitPerDay {
			t.Errorf("%q: over budget %v, over rate limit %v, cut %v, rate limit a day %g", tc.limits, a.OverBudget(), a.OverRateLimit(), a.Allotment.Cut(), a.RateLimitPerDay())
		}
	}
	// With all, the total leaves the entry out; at least one value is
	// listed.
	a := Forecast(parse(t, head+"  daily_budget: 40\n  metrics:\n    - path: /v1/btc/market-data/open-interest\n      window: hour\n      exchange: all\n")).APIs[0]
	if a.CallsPerDay != 1 || !near(a.PerValueCalls(), 25.2) || !near(a.AtLeast(), 26.2) || a.OverBudget() {
		t.Errorf("with all: %g a day, %g per value, at least %g, over budget %v", a.CallsPerDay, a.PerValueCalls(), a.AtLeast(), a.OverBudget())
	}
	// 5 000 less the 10 % reserve is 4 500: the 14 400 rows a day, at a
	// call per row polled for, are polled one in 3.2.
	a = Forecast(parse(t, head+"  daily_budget: 5000\n  metrics:\n    - path: /v1/btc/market-data/open-interest\n      window: min\n      exchange: [a, b, c, d, e, f, g, h, i, j]\n")).APIs[0]
	if f := a.Allotment.Factor("min", time.Minute); math.Abs(f-3.2) > 1e-6 {
		t.Errorf("min factor %g, want 3.2", f)
	}
	if got := a.ByEndpoint(); len(got) != 1 || got["/v1/btc/market-data/open-interest"] != 15120 {
		t.Errorf("by endpoint %v", got)
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

func TestBlockSpacing(t *testing.T) {
	cfg := parse(t, head+`  metrics:
    - path: /v1/{asset}/network-data/supply
      asset: [btc, eth, trx]
      window: block
    - path: /v1/erc20/exchange-flows/reserve
      token: link
      window: block
`)
	var got []string
	for _, tp := range cfg.Tuples {
		chain, every, ok := BlockSpacing(tp)
		got = append(got, fmt.Sprintf("%s %s %v", chain, every, ok))
	}
	want := "btc 10m0s true|ethereum 12s true|trx 0s false|ethereum 12s true"
	if strings.Join(got, "|") != want {
		t.Errorf("spacings %s, want %s", strings.Join(got, "|"), want)
	}
}

// TestForecastLearned: a series without a window costs a change an hour
// (UnwindowedInterval) until the schedule learned its cadence, then one
// call per row of that cadence; under a daily_budget between the two,
// the plan cuts the never-seen series and not the learned ones.
func TestForecastLearned(t *testing.T) {
	cfg := parse(t, `
indicator:
  url: http://127.0.0.1:1/indicator
  token_env: T
  daily_budget: 20
  metrics:
    - path: /api/equities/{equity}/pbr-band
      equity: [KRX:005930, NASDAQ:AAPL]
`)
	fresh := Forecast(cfg).APIs[0]
	learned := ForecastAPI(cfg.APIs[config.APIIndicator], func(tu *config.Tuple) time.Duration { return 24 * time.Hour })
	if want := 2 * 24 * Overhead; fresh.CallsPerDay < want-0.01 || fresh.CallsPerDay > want+0.01 {
		t.Errorf("never seen: %.2f calls a day, want %.2f (a change an hour each)", fresh.CallsPerDay, want)
	}
	if want := 2 * Overhead; learned.CallsPerDay < want-0.01 || learned.CallsPerDay > want+0.01 {
		t.Errorf("learned daily: %.2f calls a day, want %.2f", learned.CallsPerDay, want)
	}
	if !fresh.Allotment.Cut() || learned.Allotment.Cut() {
		t.Errorf("daily_budget 20: plan cut %v never seen (want true), %v learned daily (want false)", fresh.Allotment.Cut(), learned.Allotment.Cut())
	}
	if got := learned.Entries[0].Windows[0].Basis; got != "learned cadence" {
		t.Errorf("basis %q, want the learned cadence", got)
	}
}
