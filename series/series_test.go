package series_test

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/onchain-exporter/onchain_exporter/collector"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/decode"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/series"
	"github.com/onchain-exporter/onchain_exporter/testtool"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// liveConfig covers every way a sample gets its labels: parameters of the
// path and of the query, windows, row label fields (events-count kinds),
// constant labels, a key label (the price-to-book multiples), a counter,
// and a block window with its height.
const liveConfig = `data:
  url: "{{URL}}"
  token_env: T
  metrics:
    - path: /v1/btc/market-data/open-interest
      window: [day, hour]
      exchange: [binance, bybit]
    - path: /v1/{asset}/network-data/supply
      asset: btc
      window: [day, block]
    - path: /v2/network/events-count
      asset: usdt
      window: hour
    - path: /v1/trx/defi/launchpad-tokens
indicator:
  url: "{{URL}}/indicator"
  token_env: T
  metrics:
    - path: /api/equities/{equity}/pbr-band
      equity: ["KRX:005930", "NASDAQ:MSFT"]
`

// series is one series of an exposition, keyed by its labels.
type seriesKey struct{ family, labels string }

// key is the series' identity as Prometheus reads it: a label with an
// empty value is none (the exposition does not write it).
func key(family string, names, values []string) seriesKey {
	pairs := make([]string, 0, len(names))
	for i := range names {
		if values[i] != "" {
			pairs = append(pairs, names[i]+"="+values[i])
		}
	}
	sort.Strings(pairs)
	return seriesKey{family, strings.Join(pairs, ",")}
}

// TestNamesMatchTheLiveExposition scrapes a live Exporter against the fake
// upstream and checks that, for every tuple, what this package calls and
// labels each decoded sample is exactly a series the scrape serves, with
// the value it serves, and that the scrape serves no data series this
// package does not name.
func TestNamesMatchTheLiveExposition(t *testing.T) {
	for _, d := range fakeapi.Dialects {
		t.Run("dialect="+d.String(), func(t *testing.T) { compareWithLive(t, d) })
	}
}

func compareWithLive(t *testing.T, dialect fakeapi.Dialect) {
	up := testtool.StartFake(t, fakeapi.Options{Dialect: dialect})
	clock := up.Clock
	cfg := up.Config(t, liveConfig)
	reg := prometheus.NewRegistry()
	exp, err := collector.New(cfg, log.NewNopLogger(), reg, collector.Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer exp.Close()
	fams := testtool.Families(t, testtool.Serve(t, exp, ""))
	live := map[seriesKey]float64{}
	liveFams := map[string]*dto.MetricFamily{}
	for name, mf := range fams {
		if strings.HasPrefix(name, "onchain_exporter_") {
			continue
		}
		liveFams[name] = mf
		for _, m := range mf.Metric {
			var names, values []string
			for _, lp := range m.Label {
				names, values = append(names, lp.GetName()), append(values, lp.GetValue())
			}
			v := m.GetGauge().GetValue()
			if mf.GetType() == dto.MetricType_COUNTER {
				v = m.GetCounter().GetValue()
			}
			live[key(name, names, values)] = v
		}
	}

	pool := upstream.NewPool(prometheus.NewRegistry(), clock.Now, log.NewNopLogger())
	defer pool.Close()
	named := map[seriesKey]bool{}
	for _, tp := range cfg.Tuples {
		c := pool.Client(cfg.APIs[tp.API])
		root, err := c.Fetch(context.Background(), tp.Path, tp.Query().URL(), tp.Keyed, 1000)
		if err != nil {
			t.Fatalf("%s: %v", tp.Key, err)
		}
		ans, err := decode.LatestAt(root, tp, c.DefaultRows(), time.Time{})
		if err != nil {
			t.Fatalf("%s: %v", tp.Key, err)
		}
		if len(ans.Samples) == 0 {
			t.Fatalf("%s: no sample decoded", tp.Key)
		}
		for _, s := range ans.Samples {
			f, err := series.Data(s.Field)
			if err != nil {
				t.Fatalf("%s: %v", tp.Key, err)
			}
			names, values := series.Labels(tp, s)
			k := key(f.Name, names, values)
			named[k] = true
			got, ok := live[k]
			switch {
			case !ok:
				t.Errorf("%s: %s{%s} is not in the live exposition", tp.Key, k.family, k.labels)
			case got != s.Value:
				t.Errorf("%s: %s{%s} = %g, the live exposition serves %g", tp.Key, k.family, k.labels, s.Value, got)
			}
			if mf := liveFams[f.Name]; mf != nil {
				if want := strings.ToLower(mf.GetType().String()); want != f.Type {
					t.Errorf("%s: type %s, live %s", f.Name, f.Type, want)
				}
				if mf.GetHelp() != f.Help {
					t.Errorf("%s: HELP %q, live %q", f.Name, f.Help, mf.GetHelp())
				}
			}
		}
		names, values := series.TupleLabels(cfg, tp)
		k := key(series.Timestamp.Name, names, values)
		named[k] = true
		if got, ok := live[k]; !ok || got != float64(ans.RowTime.Unix()) {
			t.Errorf("%s: %s{%s}: live %g (present %v), want %d", tp.Key, k.family, k.labels, got, ok, ans.RowTime.Unix())
		}
		if ans.HasBlock {
			k := key(series.BlockHeight.Name, names, values)
			named[k] = true
			if got, ok := live[k]; !ok || got != ans.Block {
				t.Errorf("%s: %s{%s}: live %g (present %v), want %g", tp.Key, k.family, k.labels, got, ok, ans.Block)
			}
		}
	}
	for _, f := range []series.Family{series.Timestamp, series.BlockHeight} {
		mf := liveFams[f.Name]
		if mf == nil {
			t.Fatalf("%s is not in the live exposition", f.Name)
		}
		if mf.GetHelp() != f.Help {
			t.Errorf("%s: HELP %q, live %q", f.Name, f.Help, mf.GetHelp())
		}
	}
	for k := range live {
		if !named[k] {
			t.Errorf("the live exposition serves %s{%s}, which no decoded sample is named", k.family, k.labels)
		}
	}
	if len(named) < 40 {
		t.Errorf("only %d series compared; the configuration should give more", len(named))
	}
}

func TestDataRefusesWhatTheExpositionRefuses(t *testing.T) {
	for _, tc := range []struct {
		field config.Field
		err   string
	}{
		{config.Field{Name: "data_timestamp_seconds", Type: "gauge"}, "reserved"},
		{config.Field{Name: "exporter_up", Type: "gauge"}, "reserved"},
		{config.Field{Name: "events_total", Type: "gauge"}, "may not end in _total"},
		{config.Field{Name: "utxo_losses", Type: "counter"}, "must end in _total"},
	} {
		if _, err := series.Data(&tc.field); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: got %v, want an error containing %q", tc.field.Name, err, tc.err)
		}
	}
	f, err := series.Data(&config.Field{Name: "events_total", Type: "counter"})
	if err != nil || f.Name != "onchain_events_total" || f.Type != series.Counter || !strings.HasSuffix(f.Help, series.CachedNote) {
		t.Errorf("counter: got %+v, %v", f, err)
	}
}

func TestClaims(t *testing.T) {
	c := series.NewClaims()
	g := series.Family{Name: "onchain_x", Type: series.Gauge}
	if err := c.Claim("a", g, []string{"asset"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Claim("a", g, []string{"asset"}); err != nil {
		t.Errorf("the same claim again: %v", err)
	}
	for _, tc := range []struct {
		owner  string
		f      series.Family
		labels []string
		err    string
	}{
		{"b", g, []string{"asset"}, "already produced by a"},
		{"a", g, []string{"asset", "window"}, "already has labels {asset}"},
		{"a", series.Family{Name: "onchain_x", Type: series.Counter}, []string{"asset"}, "already a gauge"},
	} {
		if err := c.Claim(tc.owner, tc.f, tc.labels); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%+v: got %v, want %q", tc, err, tc.err)
		}
	}
}
