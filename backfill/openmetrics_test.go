package backfill

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

const mixedConfig = `data:
  url: "{{URL}}"
  token_env: T
  metrics:
    - path: /v1/btc/network-data/supply
      window: [day, hour, block]
    - path: /v2/network/events-count
      asset: usdt
      window: hour
    - path: /v1/trx/defi/launchpad-tokens
indicator:
  url: "{{URL}}/indicator"
  token_env: T
  metrics:
    - path: /api/equities/{equity}/pbr-band
      equity: ["KRX:005930"]
consensus:
  url: "{{URL}}/consensus"
  metrics:
    - path: /consensus
      asset: btc
`

// TestOpenMetricsFile backfills day, hour and block rows, a counter, rows
// with label fields and the Indicator API's band, and reads the file back
// with Prometheus' OpenMetrics parser: the format holds (parseOM), every
// row the upstream serves in the range is one sample at the end of its
// interval with the value served, the row's time is backfilled too, and
// each series costs one call.
func TestOpenMetricsFile(t *testing.T) {
	e := newEnv(t, mixedConfig, nil)
	o := e.options(3)
	sum := e.run(o)
	if sum.Series != 6 || sum.Written != 6 || sum.Refused+sum.Failed+sum.NotTried != 0 || !sum.Complete {
		t.Fatalf("summary %+v", sum)
	}
	if d, i, c := e.fake.Calls("data"), e.fake.Calls("indicator"), e.fake.Calls("consensus"); d != 5 || i != 1 || c != 0 {
		t.Errorf("calls: data %d, indicator %d, consensus %d; want 5, 1, 0", d, i, c)
	}
	if e.logs.Count("Analyst Consensus API has no history endpoint", "series=1") != 1 {
		t.Errorf("the consensus series are not said to be left out:\n%s", e.logs.String())
	}
	p := parseOM(t, o.Output)

	for _, w := range []struct {
		window string
		step   time.Duration
	}{{"day", 24 * time.Hour}, {"hour", time.Hour}} {
		q := map[string]string{"window": w.window, "limit": "1000",
			"from": o.From.Format(boundLayout), "to": o.To.Add(-w.step).Format(boundLayout)}
		rows := e.upstreamRows("/v1/btc/network-data/supply", q, "supply_total")["supply_total"]
		if len(rows) < 3 {
			t.Fatalf("%s: the fake served %d rows", w.window, len(rows))
		}
		labels := map[string]string{"asset": "btc", "window": w.window, "job": "onchain", "instance": "host:9799"}
		got := p.find(t, "onchain_supply", labels)
		stamps := p.find(t, "onchain_data_timestamp_seconds", map[string]string{"endpoint": "/v1/btc/network-data/supply", "window": w.window})
		times := sortedTimes(rows)
		if len(got) != len(times) || len(stamps) != len(times) {
			t.Fatalf("%s: %d samples and %d row times for %d rows", w.window, len(got), len(stamps), len(times))
		}
		for i, at := range times {
			want := point{at.Add(w.step).UnixMilli(), rows[at]}
			if got[i] != want {
				t.Errorf("%s row %s: sample %+v, want %+v", w.window, at, got[i], want)
			}
			if want := (point{at.Add(w.step).UnixMilli(), float64(at.Unix())}); stamps[i] != want {
				t.Errorf("%s row %s: time sample %+v, want %+v", w.window, at, stamps[i], want)
			}
		}
	}

	// Block rows carry their height and are stamped at their own time.
	blocks := p.find(t, "onchain_data_block_height", map[string]string{"window": "block"})
	if want := 3*24*6 + 12*6 + 3; len(blocks) < want-1 || len(blocks) > want+1 {
		t.Errorf("%d block rows in 3.5 days of 10-minute blocks", len(blocks))
	}
	for i := 1; i < len(blocks); i++ {
		if blocks[i].v != blocks[i-1].v+1 || blocks[i].ms-blocks[i-1].ms != (10*time.Minute).Milliseconds() {
			t.Fatalf("block rows %+v then %+v", blocks[i-1], blocks[i])
		}
	}

	// A counter is a counter family, its samples keep the live name.
	if typ := p.types["onchain_launchpad_token_create_events"]; typ != "counter" {
		t.Errorf("launchpad counter family: %q", typ)
	}
	p.find(t, "onchain_launchpad_token_create_events_total", map[string]string{"asset": "trx"})
	// Label fields and key labels make one series each.
	for _, kind := range []string{"mint", "burn", "issue", "redeem", "transfer"} {
		if n := len(p.find(t, "onchain_stablecoin_events", map[string]string{"kind": kind, "window": "hour"})); n < 72 {
			t.Errorf("%s: %d hour rows", kind, n)
		}
	}
	band := p.find(t, "onchain_equity_pbr_band_price", map[string]string{"multiple": "1.0", "equity": "KRX:005930"})
	if len(band) < 2 || band[0].ms < o.From.Add(24*time.Hour).UnixMilli() {
		t.Errorf("band rows %+v", band)
	}
	for key := range p.series {
		if strings.Contains(key, `=""`) {
			t.Errorf("%s carries an empty label (Prometheus drops those from what it scrapes)", key)
		}
	}
	if _, err := os.Stat(o.Output + ".parts"); !os.IsNotExist(err) {
		t.Errorf("the parts are left: %v", err)
	}
	var pf progressFile
	b, _ := os.ReadFile(o.ProgressFile)
	if err := json.Unmarshal(b, &pf); err != nil || !pf.Complete || len(pf.Series) != 6 {
		t.Errorf("progress file: complete %v, %d series, %v", pf.Complete, len(pf.Series), err)
	}
}

// TestPagesByTo: a series longer than the largest limit is asked page
// after page by to=, each page's rows older than the last, and the file
// holds every row once, oldest first.
func TestPagesByTo(t *testing.T) {
	e := newEnv(t, dataConfig(eventsEntry), nil)
	o := e.options(100) // 14 400 rows at most 10 000 per call
	o.Labels = nil
	sum := e.run(o)
	if calls := e.fake.Calls("data"); calls != 2 || sum.Calls != 2 {
		t.Errorf("%d calls (%d counted), want 2", calls, sum.Calls)
	}
	p := parseOM(t, o.Output)
	pts := p.find(t, "onchain_stablecoin_events", map[string]string{"kind": "mint"})
	want := expectedRows(e.cfg.Tuples[0], o.From, o.To.Add(-10*time.Minute))
	if len(pts) != want || sum.Rows != int64(want) {
		t.Fatalf("%d samples, %d rows, want %d", len(pts), sum.Rows, want)
	}
	if first := time.UnixMilli(pts[0].ms).UTC(); !first.Equal(o.From.Add(10 * time.Minute)) {
		t.Errorf("first sample at %s", first)
	}
	for i := 1; i < len(pts); i++ {
		if pts[i].ms-pts[i-1].ms != (10 * time.Minute).Milliseconds() {
			t.Fatalf("gap between %d and %d", pts[i-1].ms, pts[i].ms)
		}
	}
}
