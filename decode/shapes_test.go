package decode

import (
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
)

// The payloads below are written by hand, not produced by the fake
// upstream: each is a shape a real Indicator or Analyst Consensus API
// could answer in, since their documentation shows none.

// shapesConfig has no rows:, time_key: or labels: except where a test
// pins them; tuple i is shapesConfig's i-th entry.
const shapesConfig = `
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
    - path: /consensus
      asset: bitcoin
    - path: /analyst-views
      asset: bitcoin
    - path: /calls
      asset: bitcoin
    - path: /analysts/{handle}
      handle: chain_oracle
    - path: /consensus
      asset: ethereum
      rows: data
      time_key: date
    - path: /analyst-views
      asset: ethereum
      labels: [stance]
`

const (
	tBand = iota
	tConsensus
	tViews
	tCalls
	tAnalyst
	tPinned
	tPinnedLabels
)

// shapeLog stands for an API's client and keeps the shapes it is told.
type shapeLog struct {
	rows   string
	shapes []Shape
}

func (s *shapeLog) DefaultRows() string { return s.rows }

func shapesTuples(t *testing.T) []*config.Tuple {
	t.Helper()
	cfg, err := config.Parse("shapes.yml", []byte(shapesConfig), func(string) string { return "x" })
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Tuples
}

var (
	nov20 = time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	nov19 = nov20.AddDate(0, 0, -1)
)

// decodeAs decodes body for a tuple and returns its values, its row time
// and the shape reported.
func decodeAs(t *testing.T, tp *config.Tuple, body string) (map[string]float64, time.Time, Shape) {
	t.Helper()
	log := &shapeLog{rows: "data"}
	d, err := decode([]byte(body), tp, log)
	if err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	if len(d.Problems) > 0 {
		t.Errorf("%s: problems %q", body, d.Problems)
	}
	if len(log.shapes) != 1 {
		t.Fatalf("%d shapes reported, want 1", len(log.shapes))
	}
	return values(d), d.RowTime, log.shapes[0]
}

// One consensus, five shapes: the same values and the same row time.
func TestDecodeConsensusInAnyShape(t *testing.T) {
	tp := shapesTuples(t)[tConsensus]
	want := map[string]float64{"consensus_score{}": 0.25, "consensus_analysts{bullish}": 12, "consensus_analysts{bearish}": 6,
		"consensus_analysts{neutral}": 6, "consensus_analysts_counted{}": 24}
	older := `{"date":"2026-11-19","score":-0.5,"bullish":1,"bearish":13,"neutral":10,"analysts":24}`
	for _, tc := range []struct {
		name, body, rows, timeKey string
		expected                  bool
	}{
		{"rows under data", `{"asset":"bitcoin","data":[{"date":"2026-11-20","score":0.25,"bullish":12,"bearish":6,"neutral":6,"analysts":24,"stance":"bullish"},` + older + `]}`, "data", "date", true},
		{"one object", `{"asset":"bitcoin","bullish":12,"bearish":6,"neutral":6,"score":0.25,"analysts":24,"updated_at":"2026-11-20T00:00:00Z"}`, ".", "updated_at", false},
		{"bare array, oldest first, epoch ms", `[{"timestamp":1795046400000,"score":-0.5,"bullish":1,"bearish":13,"neutral":10,"analysts":24},{"timestamp":1795132800000,"score":0.25,"bullish":12,"bearish":6,"neutral":6,"analysts":24}]`, ".", "timestamp", false},
		{"epoch seconds as strings", `{"results":[{"ts":"1795132800","score":0.25,"bullish":12,"bearish":6,"neutral":6,"analysts":24}]}`, "results", "ts", false},
		{"the only list", `{"asset":"bitcoin","days":7,"history":[{"as_of":"2026-11-20","score":0.25,"bullish":12,"bearish":6,"neutral":6,"analysts":24},{"as_of":"2026-11-19","score":-0.5}]}`, "history", "as_of", false},
		{"one object holding a list of another kind", `{"asset":"bitcoin","bullish":12,"bearish":6,"neutral":6,"score":0.25,"analysts":24,"updated_at":"2026-11-20T00:00:00Z","top_analysts":[{"handle":"chain_oracle","accuracy":0.7}]}`, ".", "updated_at", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, at, shape := decodeAs(t, tp, tc.body)
			if !maps.Equal(got, want) || !at.Equal(nov20) {
				t.Errorf("values %v at %v, want %v at %v", got, at, want, nov20)
			}
			if shape.Rows != tc.rows || shape.TimeKey != tc.timeKey || shape.Expected != tc.expected {
				t.Errorf("shape %+v, want rows %q time_key %q expected %v", shape, tc.rows, tc.timeKey, tc.expected)
			}
		})
	}
}

// Views as counts per stance, or as one row per analyst (stance or
// direction), in any place: the same onchain_analyst_views{stance}; a
// stance no analyst holds counts 0.
func TestDecodeViewsCountedFromItems(t *testing.T) {
	tp := shapesTuples(t)[tViews]
	want := map[string]float64{"analyst_views{bullish}": 3, "analyst_views{bearish}": 1, "analyst_views{neutral}": 0}
	for _, tc := range []struct{ name, body, counted, from string }{
		{"counts", `{"asset":"bitcoin","date":"2026-11-20","data":[{"stance":"bullish","count":3},{"stance":"bearish","count":1},{"stance":"neutral","count":0}]}`, "", ""},
		{"items with stance", `{"asset":"bitcoin","date":"2026-11-20","data":[{"handle":"a","stance":"bullish"},{"handle":"b","stance":"bearish"},{"handle":"c","stance":"bullish"},{"handle":"d","stance":"bullish"}]}`, "stance", ""},
		{"items with direction", `[{"handle":"a","direction":"bullish","as_of":"2026-11-19"},{"handle":"b","direction":"bearish","as_of":"2026-11-20"},{"handle":"c","direction":"bullish","as_of":"2026-11-20"},{"handle":"d","direction":"bullish","as_of":"2026-11-18"}]`, "direction", "stance=direction"},
		{"items in the only list", `{"asset":"bitcoin","updated_at":"2026-11-20T00:00:00Z","views":[{"handle":"a","sentiment":"bullish"},{"handle":"b","sentiment":"bearish"},{"handle":"c","sentiment":"bullish"},{"handle":"d","sentiment":"bullish"}]}`, "sentiment", "stance=sentiment"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, at, shape := decodeAs(t, tp, tc.body)
			if !maps.Equal(got, want) || !at.Equal(nov20) {
				t.Errorf("values %v at %v, want %v at %v", got, at, want, nov20)
			}
			if shape.CountedBy != tc.counted || shape.LabelsFrom != tc.from {
				t.Errorf("shape %+v, want counted_by %q labels_from %q", shape, tc.counted, tc.from)
			}
		})
	}

	// Items without a stance are not counted, and said so; words outside
	// a known vocabulary get no zeros.
	d, err := decode([]byte(`[{"handle":"a","stance":"bullish"},{"handle":"b"},{"handle":"c","stance":"mixed"}]`), tp, rowsAt("data"))
	if err != nil {
		t.Fatal(err)
	}
	if got := values(d); len(got) != 2 || got["analyst_views{bullish}"] != 1 || got["analyst_views{mixed}"] != 1 || len(d.Problems) != 1 {
		t.Errorf("values %v problems %q", got, d.Problems)
	}
	// A page of the items: counted, served, and said to be a page only.
	for _, body := range []string{
		`{"total":40,"items":[{"handle":"a","stance":"bullish"},{"handle":"b","stance":"bearish"}]}`,
		`{"next":"/analyst-views?asset=bitcoin&page=2","data":[{"handle":"a","stance":"bullish"},{"handle":"b","stance":"bearish"}]}`,
	} {
		d, err = decode([]byte(body), tp, rowsAt("data"))
		if err != nil {
			t.Fatal(err)
		}
		if got := values(d); got["analyst_views{bullish}"] != 1 || len(d.Problems) != 0 || !strings.Contains(d.Page, "this page only") {
			t.Errorf("%s: values %v problems %q page %q", body, got, d.Problems, d.Page)
		}
	}
	// Labels pinned in the entry are read as named: direction is not
	// taken for stance.
	d, err = decode([]byte(`[{"handle":"a","direction":"bullish"}]`), shapesTuples(t)[tPinnedLabels], rowsAt("data"))
	if err != nil || len(d.Samples) != 0 {
		t.Errorf("pinned labels: %v %v", values(d), err)
	}
}

// Calls listed one per call, and a row of counts whose stance is under
// another name: counts are kept as counts.
func TestDecodeCallsAndRenamedStance(t *testing.T) {
	tps := shapesTuples(t)
	got, _, shape := decodeAs(t, tps[tCalls], `{"asset":"bitcoin","updated_at":"2026-11-20T00:00:00Z","calls":[{"handle":"a","direction":"long"},{"handle":"b","direction":"long"}]}`)
	if want := map[string]float64{"analyst_calls{long}": 2, "analyst_calls{short}": 0}; !maps.Equal(got, want) || shape.Rows != "calls" {
		t.Errorf("calls %v (shape %+v), want %v", got, shape, want)
	}
	got, _, shape = decodeAs(t, tps[tViews], `{"data":[{"direction":"bullish","count":7},{"direction":"bearish","count":2}],"date":"2026-11-20"}`)
	if want := map[string]float64{"analyst_views{bullish}": 7, "analyst_views{bearish}": 2}; !maps.Equal(got, want) || shape.CountedBy != "" || shape.LabelsFrom != "stance=direction" {
		t.Errorf("views %v (shape %+v), want %v", got, shape, want)
	}
}

// A band under items with epoch-ms timestamps, and a profile that is the
// answer itself beside a list of names.
func TestDecodeBandAndProfileShapes(t *testing.T) {
	tps := shapesTuples(t)
	got, at, shape := decodeAs(t, tps[tBand], `{"equity":"KRX:005930","items":[
		{"timestamp":1795046400000,"close":70000,"bps":50000,"pbr":1.4,"bands":{"0.5":25000,"1.0":50000}},
		{"timestamp":1795132800000,"close":71200,"bps":null,"pbr":null,"bands":{"0.5":null,"1.0":null}}]}`)
	want := map[string]float64{"equity_close_price{}": 71200, "equity_book_value_per_share{}": 50000, "equity_pbr_ratio{}": 1.4,
		"equity_pbr_band_price{0.5}": 25000, "equity_pbr_band_price{1.0}": 50000}
	if !maps.Equal(got, want) || !at.Equal(nov20) || shape.Rows != "items" || shape.TimeKey != "timestamp" {
		t.Errorf("band %v at %v (shape %+v), want %v", got, at, shape, want)
	}
	got, at, shape = decodeAs(t, tps[tAnalyst], `{"handle":"chain_oracle","covered_assets":["bitcoin","ethereum"],"accuracy":0.71,"calls":120,"followers":45000}`)
	if want := map[string]float64{"analyst_accuracy_ratio{}": 0.71, "analyst_recorded_calls{}": 120, "analyst_followers{}": 45000}; !maps.Equal(got, want) || !at.IsZero() || shape.Rows != "." || shape.TimeKey != "" {
		t.Errorf("profile %v at %v (shape %+v), want %v and no time", got, at, shape, want)
	}
}

// What cannot be read says why; a shape pinned in the entry that no
// longer holds is an error naming it, where the catalog's guess is not.
func TestDecodeShapeErrors(t *testing.T) {
	tps := shapesTuples(t)
	for _, tc := range []struct {
		name string
		tp   int
		body string
		want []string
	}{
		{"two lists", tConsensus, `{"bullish":[{"handle":"a"}],"bearish":[{"handle":"b"}]}`, []string{`"bearish"`, `"bullish"`}},
		{"words only", tConsensus, `{"asset":"bitcoin","stance":"bullish","updated_at":"2026-11-20T00:00:00Z"}`, []string{"no rows", "no numeric field"}},
		{"pinned rows gone", tPinned, `{"asset":"ethereum","score":0.25,"updated_at":"2026-11-20T00:00:00Z"}`, []string{`no "data"`, "rows: data is set in the configuration"}},
		{"pinned time key gone", tPinned, `{"data":[{"updated_at":"2026-11-20T00:00:00Z","score":0.25}]}`, []string{`"date"`, "time_key: date is set in the configuration"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := decode([]byte(tc.body), tps[tc.tp], rowsAt("data"))
			if err == nil {
				t.Fatalf("no error: %v", values(d))
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
	// The pinned tuple reads its shape, and an unpinned one reads the same
	// answer whose catalog place (data) is missing.
	if got, _, _ := decodeAs(t, tps[tPinned], `{"data":[{"date":"2026-11-20","score":0.25}]}`); got["consensus_score{}"] != 0.25 {
		t.Errorf("pinned: %v", got)
	}
	if got, at, _ := decodeAs(t, tps[tConsensus], `{"score":0.25,"as_of":"2026-11-19"}`); got["consensus_score{}"] != 0.25 || !at.Equal(nov19) {
		t.Errorf("unpinned: %v at %v", got, at)
	}
}

// TestTopAnalystsKeepsTheLimit: /analysts/top with limit 10 serves at most
// ten handles whatever the upstream sends, the first ten of the answer.
func TestTopAnalystsKeepsTheLimit(t *testing.T) {
	cfg, err := config.Parse("top.yml", []byte(`
consensus:
  url: http://127.0.0.1:1/consensus
  metrics:
    - path: /analysts/top
      asset: bitcoin
      limit: 10
`), func(string) string { return "x" })
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString(`{"data":[`)
	for i := 0; i < 5000; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"handle":"h%04d","accuracy":0.5,"rank":%d}`, i, i+1)
	}
	b.WriteString(`]}`)
	d, err := decode([]byte(b.String()), cfg.Tuples[0], rowsAt("data"))
	if err != nil {
		t.Fatal(err)
	}
	handles := map[string]bool{}
	for _, s := range d.Samples {
		handles[strings.Join(s.ExtraValues(), ",")] = true
	}
	if len(handles) != 10 || !handles["h0000"] || !handles["h0009"] || d.Over == "" {
		t.Errorf("%d handles served (%v), over %q; want the first 10 and a warning", len(handles), handles, d.Over)
	}
}
