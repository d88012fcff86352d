package decode

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
)

func tupleFor(t *testing.T, yml string) *config.Tuple {
	t.Helper()
	cfg, err := config.Parse("t.yml", []byte(yml), func(string) string { return "x" })
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Tuples[0]
}

const netflowYAML = `
data:
  url: http://127.0.0.1:1
  token_env: T
  metrics:
    - path: /v1/btc/exchange-flows/netflow
      exchange: binance
`

// rowsAt stands for an API in decode tests: where its answers keep rows
// by default; the shapes found are dropped.
type rowsAt string

func (r rowsAt) DefaultRows() string { return string(r) }

// shapeSource is what decode reads of an API in tests.
type shapeSource interface{ DefaultRows() string }

// decode parses body and reads its latest values, as a refresh does.
func decode(body []byte, t *config.Tuple, up shapeSource) (*Answer, error) {
	root, err := Parse(body, 1000)
	if err != nil {
		return nil, err
	}
	d, err := LatestAt(root, t, up.DefaultRows(), time.Time{})
	if err == nil && d.HasShape {
		if l, ok := up.(*shapeLog); ok {
			l.shapes = append(l.shapes, d.Shape)
		}
	}
	return d, err
}

func values(d *Answer) map[string]float64 {
	out := map[string]float64{}
	for _, s := range d.Samples {
		out[s.Field.Name+"{"+strings.Join(s.ExtraValues(), ",")+"}"] = s.Value
	}
	return out
}

func TestDecodeLatestNonNullWhateverTheOrder(t *testing.T) {
	tp := tupleFor(t, netflowYAML)
	for name, body := range map[string]string{
		"latest first": `{"status":{"code":200,"message":"success"},"result":{"window":"day","data":[
			{"date":"2026-11-20","netflow_total":null,"inflow_total":7},
			{"date":"2026-11-19","netflow_total":-3.5,"inflow_total":6},
			{"date":"2026-11-18","netflow_total":1,"inflow_total":5}]}}`,
		"oldest first": `{"status":{"code":200,"message":"success"},"result":{"window":"day","data":[
			{"date":"2026-11-18","netflow_total":1,"inflow_total":5},
			{"date":"2026-11-19","netflow_total":-3.5,"inflow_total":6},
			{"date":"2026-11-20","netflow_total":null,"inflow_total":7}]}}`,
	} {
		d, err := decode([]byte(body), tp, rowsAt("result.data"))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := values(d)
		if got["exchange_netflow{}"] != -3.5 || got["exchange_netflow_inflow{}"] != 7 || len(got) != 2 {
			t.Errorf("%s: values %v, want netflow -3.5 (latest non-null) and inflow 7", name, got)
		}
		if want := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC); !d.RowTime.Equal(want) || !d.Newest.Equal(want) {
			t.Errorf("%s: row time %v newest %v", name, d.RowTime, d.Newest)
		}
		if d.Interval != 24*time.Hour {
			t.Errorf("%s: interval %v", name, d.Interval)
		}
	}
}

// usdtBlockYAML is a tuple of stablecoin events, one row a block.
const usdtBlockYAML = `
data:
  url: http://127.0.0.1:1
  token_env: T
  metrics:
    - path: /v2/network/events-count
      asset: usdt
      window: block
`

func TestDecodeTimeKeysAndBlockHeight(t *testing.T) {
	tp := tupleFor(t, usdtBlockYAML)
	body := `{"status":{"code":200,"message":"success"},"result":{"window":"block","data":[
		{"datetime":"2026-11-20 12:00:24","blockheight":21000002,"events_mint_count":2,"events_burn_count":0},
		{"datetime":"2026-11-20 12:00:12","blockheight":21000001,"events_mint_count":1,"events_burn_count":4}]}}`
	d, err := decode([]byte(body), tp, rowsAt("result.data"))
	if err != nil {
		t.Fatal(err)
	}
	if !d.HasBlock || d.Block != 21000002 {
		t.Errorf("block = %v %v", d.HasBlock, d.Block)
	}
	if want := time.Date(2026, 11, 20, 12, 0, 24, 0, time.UTC); !d.RowTime.Equal(want) {
		t.Errorf("row time %v", d.RowTime)
	}
	if d.Interval != 12*time.Second {
		t.Errorf("interval %v", d.Interval)
	}
	got := values(d)
	if got["stablecoin_events{mint}"] != 2 || got["stablecoin_events{burn}"] != 0 {
		t.Errorf("values %v", got)
	}
	// v2 daily rows may carry date instead of datetime.
	d, err = decode([]byte(`{"status":{"code":200,"message":"success"},"result":{"data":[{"date":"2026-11-19","events_mint_count":3}]}}`), tp, rowsAt("result.data"))
	if err != nil || !d.RowTime.Equal(time.Date(2026, 11, 19, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("date key: %v %v", d.RowTime, err)
	}
}

func TestDecodeBadValuesAreSkippedNotFatal(t *testing.T) {
	tp := tupleFor(t, netflowYAML)
	body := `{"status":{"code":200,"message":"success"},"result":{"data":[
		{"date":"2026-11-20","netflow_total":"12.5","inflow_total":"NaN","outflow_total":1e999,"ok_total":3},
		{"date":"2026-11-19","netflow_total":2,"inflow_total":4,"outflow_total":5,"ok_total":1}]}}`
	d, err := decode([]byte(body), tp, rowsAt("result.data"))
	if err != nil {
		t.Fatal(err)
	}
	got := values(d)
	// The newest valid value of each field wins; bad ones are reported.
	if got["exchange_netflow{}"] != 2 || got["exchange_netflow_inflow{}"] != 4 || got["exchange_netflow_outflow{}"] != 5 || got["exchange_netflow_ok{}"] != 3 {
		t.Errorf("values %v", got)
	}
	if len(d.Problems) != 3 {
		t.Errorf("problems %q, want 3", d.Problems)
	}
}

func TestDecodeRejectsWhatIsNotRows(t *testing.T) {
	tp := tupleFor(t, netflowYAML)
	for body, want := range map[string]string{
		`{"status":{"code":200},"result":{"data":[`:   "invalid JSON",
		`{"status":{"code":200},"result":{}}`:         "no rows in the answer",
		`{"status":{"code":200},"result":{"data":5}}`: "no rows in the answer",
	} {
		if _, err := decode([]byte(body), tp, rowsAt("result.data")); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v, want %q", body, err, want)
		}
	}
	d, err := decode([]byte(`{"status":{"code":200},"result":{"data":[]}}`), tp, rowsAt("result.data"))
	if err != nil || len(d.Samples) != 0 {
		t.Errorf("empty data: %v %v", d, err)
	}
}

func TestDecodeKeyLabelAndRowLabels(t *testing.T) {
	cfg, err := config.Parse("t.yml", []byte(`
consensus:
  url: http://127.0.0.1:1
  token_env: T
  metrics:
    - path: /calls
      asset: bitcoin
      labels: [direction]
      fields:
        count: {name: analyst_calls}
    - path: /bands
      asset: bitcoin
      fields:
        bands: {name: band_price, key_label: multiple}
`), func(string) string { return "x" })
	if err != nil {
		t.Fatal(err)
	}
	tp := cfg.Tuples[0]
	body := `{"asset":"bitcoin","date":"2026-11-22","data":[{"direction":"long","count":7},{"direction":"short","count":2}]}`
	d, err := decode([]byte(body), tp, rowsAt("data"))
	if err != nil {
		t.Fatal(err)
	}
	if got := values(d); got["analyst_calls{long}"] != 7 || got["analyst_calls{short}"] != 2 || len(got) != 2 {
		t.Errorf("values %v", got)
	}
	if !d.RowTime.Equal(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("row time from the payload's root: %v", d.RowTime)
	}
	bands := `{"data":[{"date":"2026-11-20","bands":{"0.5":10,"1.0":20,"x":"bad"}},{"date":"2026-11-19","bands":{"0.5":9}}]}`
	d, err = decode([]byte(bands), cfg.Tuples[1], rowsAt("data"))
	if err != nil {
		t.Fatal(err)
	}
	if got := values(d); got["band_price{0.5}"] != 10 || got["band_price{1.0}"] != 20 || len(got) != 2 || len(d.Problems) != 1 {
		t.Errorf("values %v problems %q", got, d.Problems)
	}
}

func TestHistoryGivesEveryRowOldestFirst(t *testing.T) {
	tp := tupleFor(t, netflowYAML)
	body := `{"status":{"code":200,"message":"success"},"result":{"window":"day","data":[
		{"date":"2026-11-20","netflow_total":null},
		{"date":"2026-11-19","netflow_total":-5},
		{"netflow_total":99},
		{"date":"2026-11-18","netflow_total":"bad"},
		{"date":"2026-11-17","netflow_total":7}]}}`
	root, err := Parse([]byte(body), 0)
	if err != nil {
		t.Fatal(err)
	}
	rows, problems, err := History(root, tp, "result.data")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows {
		for _, s := range r.Samples {
			got = append(got, fmt.Sprintf("%s %s=%g", r.Time.Format(time.DateOnly), s.Field.Name, s.Value))
		}
	}
	want := []string{"2026-11-17 exchange_netflow=7", "2026-11-19 exchange_netflow=-5"}
	if !slices.Equal(got, want) {
		t.Errorf("history %q, want %q", got, want)
	}
	if len(problems) != 1 {
		t.Errorf("problems %q, want the bad value of 2026-11-18", problems)
	}
}
