package collector

import (
	"math"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/decode"
	"github.com/onchain-exporter/onchain_exporter/exposition"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// Seeds beyond the inline ones live in testdata/fuzz/<FuzzName>; to fuzz
// longer than CI does:
//
//	go test -run '^$' -fuzz FuzzDecode -fuzztime 10m -parallel 1 ./collector

// fuzzConfig has one tuple of every payload shape the decoder knows: the
// data API's catalog and derived fields, constant labels and block rows,
// the Indicator band (an object of numbers under a key label), and
// consensus rows with label fields and words beside the numbers, and
// consensus views whose rows may be items to count.
const fuzzConfig = `
data:
  url: http://127.0.0.1:1
  token_env: T
  metrics:
    - path: /v1/btc/network-data/supply
      window: day
    - path: /v1/btc/exchange-flows/netflow
      exchange: binance
    - path: /v2/network/events-count
      asset: usdt
      window: block
indicator:
  url: http://127.0.0.1:1/indicator
  token_env: T
  metrics:
    - path: /api/equities/{equity}/pbr-band
      equity: "KRX:005930"
consensus:
  url: http://127.0.0.1:1/consensus
  token_env: T
  metrics:
    - path: /calls
      asset: btc
    - path: /consensus
      asset: btc
    - path: /custom
      asset: btc
      rows: result.items
      time_key: ts
      labels: [kind, side]
      fields:
        value: {name: custom_value}
        nested: {name: custom_nested, key_label: key}
    - path: /analyst-views
      asset: btc
`

var fuzzTuples = sync.OnceValue(func() []*config.Tuple {
	cfg, err := config.Parse("fuzz.yml", []byte(fuzzConfig), func(string) string { return "x" })
	if err != nil {
		panic(err)
	}
	return cfg.Tuples
})

// FuzzDecode feeds any body to the decoder with every tuple shape: it must
// not panic, and what it accepts must be finite values that make valid
// metrics.
func FuzzDecode(f *testing.F) {
	for i, body := range []string{
		`{"status":{"code":200,"message":"success"},"result":{"window":"day","data":[{"date":"2026-11-20","supply_total":19800000.5,"supply_new":450},{"date":"2026-11-19","supply_total":null,"supply_new":"450"}]}}`,
		`{"status":{"code":200,"message":"deprecated"},"result":{"data":[{"date":"2026-11-20","netflow_total":1e999},{"date":"2026-11-19","netflow_total":-3.5}]}}`,
		`{"status":{"code":200,"message":"success"},"result":{"window":"block","data":[{"datetime":"2026-11-20 12:00:24","blockheight":21000002,"events_mint_count":2}]}}`,
		`{"equity":"KRX:005930","data":[{"date":"2026-11-20","close":71200,"bps":52000.5,"pbr":1.37,"bands":{"0.5":26000.25,"1.0":"x","2.5":null}}]}`,
		`{"asset":"btc","date":"2026-11-22","data":[{"direction":"long","count":7},{"direction":"short","count":2}]}`,
		`{"asset":"btc","data":[{"date":"2026-11-22","score":0.25,"bullish":5,"stance":"bullish"}]}`,
		`{"result":{"items":[{"ts":1795000000000,"kind":"a","side":true,"value":1,"nested":{"x":1,"y":[1]}},{"ts":"2026-11-20T01:02:03Z","kind":null,"value":2}]}}`,
		`{"data":{"date":"2026-11-20","count":1}}`,
		`[]`, `null`, `{"data":[1,"a",null,[]]}`, `{"result":{"data":null}}`,
	} {
		f.Add([]byte(body), uint8(i))
	}
	// Shapes found without rows: or time_key: (upstream/shape.go), each
	// with the tuple it is an answer of (the index into fuzzConfig).
	for _, seed := range []struct {
		body  string
		tuple uint8
	}{
		{`[{"timestamp":1795132800000,"close":71200,"bands":{"0.5":1}},{"timestamp":"1795046400","close":"70000"}]`, 3},
		{`{"asset":"btc","bullish":12,"bearish":6,"score":0.25,"updated_at":"2026-11-20T00:00:00Z"}`, 5},
		{`{"asset":"btc","days":7,"history":[{"as_of":20261120,"score":0.1},{"as_of":"2026-11-19","score":null}]}`, 5},
		{`{"bullish":[{"handle":"a"}],"bearish":[{"handle":"b"}]}`, 5},
		{`{"asset":"btc","updated_at":"2026-11-20T00:00:00Z","calls":[{"handle":"a","direction":"long"},{"handle":"b"},{"direction":5}]}`, 4},
		{`[{"handle":"a","stance":"bullish","as_of":"2026-11-20"},{"handle":"b","sentiment":"bearish"}]`, 7},
		{`[{"handle":"a","direction":"bullish","as_of":1795132800},{"handle":"b","direction":"bearish"}]`, 7},
		{`{"data":{"total":2,"rows":[{"date":"2026-11-20","count":1}]}}`, 7},
		{`{"handle":"x","covered_assets":["btc"],"accuracy":"0.7"}`, 6},
	} {
		f.Add([]byte(seed.body), seed.tuple)
	}
	f.Fuzz(func(t *testing.T, body []byte, which uint8) {
		tuples := fuzzTuples()
		tp := tuples[int(which)%len(tuples)]
		root, err := decode.Parse(body, decode.MaxRows)
		if err != nil {
			return
		}
		d, err := decode.LatestAt(root, tp, upstream.DefaultRows(tp.API), time.Time{})
		if err != nil {
			if d != nil {
				t.Fatal("decode returned both a result and an error")
			}
			return
		}
		for _, s := range d.Samples {
			if math.IsNaN(s.Value) || math.IsInf(s.Value, 0) {
				t.Fatalf("non-finite sample %v of %s", s.Value, s.Field.Name)
			}
			if len(s.ExtraNames()) != len(s.ExtraValues()) {
				t.Fatalf("labels %v for values %v", s.ExtraNames(), s.ExtraValues())
			}
			for _, v := range s.ExtraValues() {
				if !utf8.ValidString(v) {
					t.Fatalf("label value %q is not UTF-8", v)
				}
			}
		}
		if !d.RowTime.IsZero() && d.RowTime.After(d.Newest) {
			t.Fatalf("row time %v after the newest row %v", d.RowTime, d.Newest)
		}
		if d.Interval < 0 {
			t.Fatalf("negative row interval %v", d.Interval)
		}
		values, _ := exposition.NewFamilies().Build(tp, d.Samples)
		for _, v := range values {
			// Every rendered series must read back as what it says.
			text := "# TYPE " + v.Family().Name() + " " + strings.ToLower(v.Family().Type().String()) + "\n" + string(v.Line())
			p := expfmt.NewTextParser(model.UTF8Validation)
			mfs, err := p.TextToMetricFamilies(strings.NewReader(text))
			if err != nil || len(mfs) != 1 || len(mfs[v.Family().Name()].GetMetric()) != 1 {
				t.Fatalf("rendered series does not parse (%v):\n%s", err, text)
			}
		}
	})
}
