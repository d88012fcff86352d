package benchmark

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"time"

	"github.com/onchain-exporter/onchain_exporter/collector"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/testtool/simclock"
)

// EconomyOptions shape a simulated day.
type EconomyOptions struct {
	// Tuples per kind: day, hour, block (btc, 10 min blocks) and
	// fast-block (eth, 12 s blocks) windows.
	Day, Hour, Block, FastBlock int
	Replicas                    int
	Interval, Duration          time.Duration
	// Lags overrides the fake's publication lag per window.
	Lags map[string]time.Duration
}

// Economy is the outcome of a simulated run, per window kind.
type Economy struct {
	Rows []EconomyRow
	// Scrapes is the number of scrapes all replicas made.
	Scrapes int
}

// EconomyRow counts one kind of tuple.
type EconomyRow struct {
	Kind   string
	Tuples int
	// NewRows counts the rows the exporter had to deliver: the row
	// visible at the start plus every row published during the run.
	NewRows int
	Calls   int64
	// Naive is what an exporter without a cache would have called.
	Naive int64
	// Excess sums, over every scrape and tuple of the kind, how far the
	// row served was behind the newest row the upstream had published
	// with a value (Staleness is its mean): what the calls cost in
	// freshness, in the same run.
	Excess  time.Duration
	Samples int
}

// Staleness is the mean excess staleness: how far the row a scrape
// served was behind the newest row the upstream had published.
func (r EconomyRow) Staleness() time.Duration {
	return r.Excess / time.Duration(max(r.Samples, 1))
}

// Ratio is calls per new row.
func (r EconomyRow) Ratio() float64 { return float64(r.Calls) / float64(max(r.NewRows, 1)) }

type kind struct {
	name, path, window, asset string
	params                    func(i int) string
	count                     int
}

var exchanges = []string{"all_exchange", "binance", "bybit", "okx", "deribit", "bitmex", "gate_io", "huobi", "kraken", "bitfinex", "bitget"}
var tokens = []string{"usdt", "usdc", "link", "uni", "shib", "dai", "matic", "aave", "mkr", "wbtc", "ape", "ldo", "grt", "pepe"}
var stablecoins = []string{"usdt", "usdc", "dai", "busd", "tusd", "pyusd", "usdp", "gusd", "fdusd", "frax"}

// entries lays out n tuples of a kind as metrics entries, one per tuple.
func (k kind) entries() string {
	var b strings.Builder
	for i := 0; i < k.count; i++ {
		fmt.Fprintf(&b, "    - path: %s\n      window: %s\n%s", k.path, k.window, k.params(i))
	}
	return b.String()
}

// RunEconomy scrapes the exporter every Interval from each replica (the
// replicas offset within the interval) for Duration of simulated time.
func RunEconomy(o EconomyOptions) (*Economy, error) {
	start := time.Date(2026, 11, 20, 0, 3, 7, 0, time.UTC)
	clock := simclock.New(start)
	fake := fakeapi.New(fakeapi.Options{Now: clock.Now, DataToken: "bench", PublishLag: o.Lags})
	srv := httptest.NewServer(fake)
	defer srv.Close()
	kinds := []kind{
		{name: "day", path: "/v1/erc20/exchange-flows/reserve", window: "day", asset: "erc20", count: o.Day,
			params: func(i int) string {
				return fmt.Sprintf("      token: %s\n      exchange: %s\n", tokens[i%len(tokens)], exchanges[i/len(tokens)%len(exchanges)])
			}},
		{name: "hour", path: "/v1/btc/market-data/open-interest", window: "hour", asset: "btc", count: o.Hour,
			params: func(i int) string {
				return fmt.Sprintf("      exchange: %s\n      symbol: %s\n", exchanges[i%len(exchanges)], []string{"all_symbol", "btc_usd", "btc_usdt"}[i/len(exchanges)%3])
			}},
		{name: "block (btc, 10 min)", path: "/v1/btc/network-data/supply", window: "block", asset: "btc", count: min(o.Block, 1),
			params: func(int) string { return "" }},
		{name: "block (eth, 12 s)", path: "/v2/network/events-count", window: "block", asset: "", count: o.FastBlock,
			params: func(i int) string { return fmt.Sprintf("      asset: %s\n", stablecoins[i%len(stablecoins)]) }},
	}
	var yml strings.Builder
	fmt.Fprintf(&yml, "data:\n  url: %s\n  token_env: T\n  concurrency: 8\n  metrics:\n", srv.URL)
	for _, k := range kinds {
		yml.WriteString(k.entries())
	}
	cfg, exp, err := newExporter("economy.yml", yml.String(), collector.Options{Clock: clock})
	if err != nil {
		return nil, err
	}
	defer exp.Close()

	econ := &Economy{}
	assetOf := func(k kind, t *config.Tuple) string {
		if a := t.Params.Get("asset"); a != "" {
			return a
		}
		return k.asset
	}
	rows := make([]EconomyRow, len(kinds))
	offset := o.Interval / time.Duration(max(o.Replicas, 1))
	for elapsed := time.Duration(0); elapsed < o.Duration; elapsed += o.Interval {
		for r := 0; r < o.Replicas; r++ {
			body, err := scrapeText(exp)
			if err != nil {
				return nil, fmt.Errorf("scrape at %s: %w", clock.Now(), err)
			}
			served, err := servedRows(body, cfg.TupleLabelNames)
			if err != nil {
				return nil, fmt.Errorf("scrape at %s: %w", clock.Now(), err)
			}
			now := clock.Now()
			for i, k := range kinds {
				for _, t := range cfg.Tuples {
					if t.Path != k.path || t.Window != k.window {
						continue
					}
					newest := fake.NewestVisible(t.Path, t.Window, assetOf(k, t), now)
					if nullsNewest(t) {
						// The fake's newest row of this series has no
						// value (freshness.go leaves it out): the one
						// before is the newest that can be served.
						newest = newest.Add(-fake.RowStep(t.Path, t.Window, assetOf(k, t)))
					}
					if row, ok := served[strings.Join(t.TupleLabelValues, "\xff")]; ok && !newest.IsZero() {
						rows[i].Excess += max(newest.Sub(row), 0)
						rows[i].Samples++
					}
				}
			}
			econ.Scrapes++
			runUntil(clock, exp, clock.Now().Add(offset))
		}
	}
	end := clock.Now()
	for i, k := range kinds {
		if k.count == 0 {
			continue
		}
		row := rows[i]
		row.Kind, row.Tuples, row.Naive = k.name, k.count, int64(econ.Scrapes*k.count)
		for _, t := range cfg.Tuples {
			if t.Path != k.path || t.Window != k.window {
				continue
			}
			row.NewRows += 1 + fake.RowsPublished(t.Path, t.Window, assetOf(k, t), start, end)
		}
		row.Calls = fake.CallsFor(k.path)
		econ.Rows = append(econ.Rows, row)
	}
	return econ, nil
}

// nullsNewest says whether the fake answers t's newest row without a
// value: bybit's open interest (fakeapi's data.go).
func nullsNewest(t *config.Tuple) bool {
	return t.Path == "/v1/btc/market-data/open-interest" && t.Params.Get("exchange") == "bybit"
}

// scrapeText serves one scrape as Prometheus asks for it (plain text, a
// 10 s timeout) and returns the exposition.
func scrapeText(exp http.Handler) ([]byte, error) { return scrapeWithin(exp, "10") }

// scrapeWithin is scrapeText with the scrape timeout given, in seconds.
func scrapeWithin(exp http.Handler, timeout string) ([]byte, error) {
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", timeout)
	rec := httptest.NewRecorder()
	exp.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d", rec.Code)
	}
	return rec.Body.Bytes(), nil
}

// Total sums the rows.
func (e *Economy) Total() EconomyRow {
	t := EconomyRow{Kind: "all"}
	for _, r := range e.Rows {
		t.Tuples += r.Tuples
		t.NewRows += r.NewRows
		t.Calls += r.Calls
		t.Naive += r.Naive
		t.Excess += r.Excess
		t.Samples += r.Samples
	}
	return t
}

// Table renders the economy as a markdown table.
func (e *Economy) Table() string {
	var b strings.Builder
	b.WriteString("| tuples | window | new rows | upstream calls | calls per new row | mean excess staleness | no-cache calls |\n|---:|---|---:|---:|---:|---:|---:|\n")
	rows := append([]EconomyRow(nil), e.Rows...)
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Kind < rows[j].Kind })
	for _, r := range append(rows, e.Total()) {
		stale := r.Staleness().Round(100 * time.Millisecond).String()
		if r.Kind == "all" {
			stale = "–" // a mean over windows of different spacing says nothing
		}
		fmt.Fprintf(&b, "| %d | %s | %d | %d | %.2f | %s | %d |\n", r.Tuples, r.Kind, r.NewRows, r.Calls, r.Ratio(), stale, r.Naive)
	}
	return b.String()
}
