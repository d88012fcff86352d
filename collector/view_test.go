package collector

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/published"
	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// viewOf is the published view of the series of a path.
func viewOf(t *testing.T, e *Exporter, path string) published.Series {
	t.Helper()
	for _, a := range e.View() {
		for _, s := range a.Series {
			if s.Tuple.Path == path {
				return s
			}
		}
	}
	t.Fatalf("no series of %s in the view", path)
	return published.Series{}
}

// The view publishes each series' last answers and the text of its last
// failure: the member that called says what failed in full; a member
// that took a peer's row says the peer's outcome, its code and when, as
// a peer's answer, and a success clears the text.
func TestViewPublishesAnswersAndTheErrorText(t *testing.T) {
	const yml = testtool.DataSection + `    - path: /v1/btc/network-data/supply
      window: day
    - path: /v1/btc/bench-data/not-served
      window: day
`
	const live, gone = "/v1/btc/network-data/supply", "/v1/btc/bench-data/not-served"
	owner := newEnv(t, yml, fakeapi.Options{})
	replica := envOn(t, owner.clock, owner.srv, yml)
	owner.scrape("10")
	for _, e := range engines(owner.exp) {
		for _, row := range e.appendRows(nil, nil) {
			b, err := json.Marshal(row)
			if err != nil {
				t.Fatal(err)
			}
			if err := (replicated{replica.exp}).Merge(b); err != nil {
				t.Fatal(err)
			}
		}
	}

	ok, failed := viewOf(t, owner.exp, live), viewOf(t, owner.exp, gone)
	if len(ok.Answers) != 1 || ok.Answers[0].Outcome != published.AnswerOK || ok.Answers[0].By != published.ByThis || ok.Answers[0].Shape == nil ||
		ok.Answers[0].Samples == 0 || ok.LastError != "" {
		t.Errorf("the owner's live series: %+v, error %q", ok.Answers, ok.LastError)
	}
	if len(failed.Answers) != 1 || failed.Answers[0].Outcome != published.AnswerError || failed.Answers[0].Code == "" ||
		!strings.HasPrefix(failed.LastError, "refresh failed") || !strings.Contains(failed.LastError, gone) {
		t.Errorf("the owner's failing series: %+v, error %q", failed.Answers, failed.LastError)
	}

	ok, failed = viewOf(t, replica.exp, live), viewOf(t, replica.exp, gone)
	if len(ok.Answers) != 1 || ok.Answers[0].Outcome != published.AnswerOK || ok.Answers[0].By != published.ByPeer || ok.LastError != "" {
		t.Errorf("the replica's live series: %+v, error %q", ok.Answers, ok.LastError)
	}
	code := viewOf(t, owner.exp, gone).Answers[0].Code
	if len(failed.Answers) != 1 || failed.Answers[0].Outcome != published.AnswerError || failed.Answers[0].By != published.ByPeer ||
		failed.Answers[0].Code != code || !strings.Contains(failed.LastError, "a peer made") ||
		!strings.Contains(failed.LastError, viewOf(t, owner.exp, gone).LastError) {
		t.Errorf("the replica's failing series: %+v, error %q", failed.Answers, failed.LastError)
	}
}

// The view publishes a series' values as decoded and the rows they came
// from: after three days of an hourly series, one point a new row, the
// newest the row served and the value of its first sample, oldest first,
// no more than published.MaxPoints; and once the key's delay is learned,
// when the next row is due, as row_due_timestamp_seconds says.
func TestViewPublishesTheRowsAndTheirValues(t *testing.T) {
	const yml = testtool.DataSection + `    - path: /v1/btc/network-data/supply
      window: hour
`
	e := newEnv(t, yml, fakeapi.Options{})
	e.scrape("10")
	s := viewOf(t, e.exp, "/v1/btc/network-data/supply")
	if len(s.Samples) == 0 || len(s.Points.Rows()) != 1 || s.Points.Rows()[0] != (published.Point{At: s.Newest.Unix(), Value: s.Samples[0].Value}) {
		t.Fatalf("after the first refresh: samples %v, points %v, newest row %v", s.Samples, s.Points.Rows(), s.Newest)
	}
	var body string
	for range 3 * 24 {
		e.clock.Add(time.Hour)
		body = e.scrape("10")
	}
	s = viewOf(t, e.exp, "/v1/btc/network-data/supply")
	rows := s.Points.Rows()
	if len(rows) != published.MaxPoints || rows[len(rows)-1] != (published.Point{At: s.Newest.Unix(), Value: s.Samples[0].Value}) {
		t.Fatalf("after three days: %d points, the last %v; newest row %v, value %v", len(rows), rows[len(rows)-1], s.Newest, s.Samples[0].Value)
	}
	for i := 1; i < len(rows); i++ {
		if rows[i].At <= rows[i-1].At {
			t.Errorf("point %d at %d after %d", i, rows[i].At, rows[i-1].At)
		}
	}
	due := ""
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, "onchain_exporter_row_due_timestamp_seconds{") {
			due = l[strings.LastIndexByte(l, ' ')+1:]
		}
	}
	if s.Due.IsZero() || due != strconv.FormatFloat(float64(s.Due.UnixNano())/1e9, 'g', -1, 64) {
		t.Errorf("the series is due at %v, row_due_timestamp_seconds says %q", s.Due, due)
	}
}
