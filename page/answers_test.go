package page

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/fakeapi"
)

// seriesOfPath is the item of the first series whose path holds part.
func seriesOfPath(t *testing.T, st Status, part string) Series {
	t.Helper()
	for _, s := range st.Series.Items {
		if strings.Contains(s.Path, part) {
			return s
		}
	}
	t.Fatalf("no series of %s: %+v", part, st.Series.Items)
	return Series{}
}

// metricValue is the value of the one line of /metrics that starts with
// prefix (a family and its labels, as written), and whether there is one.
func metricValue(body, prefix string) (float64, bool) {
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, prefix+" ") {
			v, err := strconv.ParseFloat(strings.TrimPrefix(l, prefix+" "), 64)
			return v, err == nil
		}
	}
	return 0, false
}

// A series' view and its JSON list its last answers: when each call was
// sent, how long it took, the outcome with its code, who made it and
// the answer's shape as the decoder found it; the failing series' error
// is the engine's published text, its code the one /metrics counts.
func TestSeriesViewShowsItsAnswers(t *testing.T) {
	r := smallRig(t)
	st := statusOf(t, r, PathJSON)
	live, failing := seriesOfPath(t, st, "network-data/supply"), seriesOfPath(t, st, "not-served")
	if len(live.Answers) != 1 {
		t.Fatalf("the live series after one refresh: %+v", live.Answers)
	}
	a := live.Answers[0]
	if a.Outcome != "ok" || a.Code != "" || a.By != "this member" || a.Duration == nil || *a.Duration < 0 || *a.Duration > 30 ||
		a.Rows != "result.data" || a.Samples < 1 || a.Fields < 1 || a.Fields > a.Samples || a.Newest.IsZero() ||
		!a.Newest.Equal(live.Newest) || a.At.After(st.Generated) {
		t.Errorf("the live series' answer: %+v (the series' newest row %v)", a, live.Newest)
	}
	if len(failing.Answers) != 1 {
		t.Fatalf("the failing series: %+v", failing.Answers)
	}
	f := failing.Answers[0]
	if f.Outcome != "error" || f.Code == "" || f.Duration == nil || f.Rows != "" || f.Samples != 0 || !strings.Contains(failing.Error, f.Code) {
		t.Errorf("the failing series' answer: %+v, its error %q", f, failing.Error)
	}
	// The code is the one api_errors_total counts.
	if v, ok := metricValue(r.scrape(t), fmt.Sprintf(`onchain_exporter_api_errors_total{api="data",code=%q}`, f.Code)); !ok || v < 1 {
		t.Errorf("/metrics counts no error of code %s (%v, %v)", f.Code, v, ok)
	}

	code, view := r.get(t, "/series?api=data&key="+url.QueryEscape(live.Key))
	if code != http.StatusOK || !contains(view, `id="series-answers"`, `<tr class="answer ok">`, "rows at <code>result.data</code>") {
		t.Errorf("the live series' view: HTTP %d\n%s", code, view)
	}
	code, view = r.get(t, "/series?api=data&key="+url.QueryEscape(failing.Key))
	if code != http.StatusOK || !contains(view, `<tr class="answer error">`, "<code>"+f.Code+"</code>") {
		t.Errorf("the failing series' view: HTTP %d\n%s", code, view)
	}
	if strings.Contains(view, secret) {
		t.Error("the credential shows")
	}
}

// A series keeps its last 8 answers, newest first.
func TestSeriesKeepsItsLastEightAnswers(t *testing.T) {
	r := newRig(t, fakeapi.Options{}, func(u string) string {
		return fmt.Sprintf(`
data:
  url: %s
  token_env: T
  metrics:
    - path: /v1/btc/network-data/supply
      window: day
      cache_ttl: 100ms
`, u)
	})
	first := statusOf(t, r, PathJSON).Series.Items[0].Answers
	if len(first) != 1 {
		t.Fatalf("after the first fill: %+v", first)
	}
	var s Series
	for deadline := time.Now().Add(30 * time.Second); ; {
		r.scrape(t)
		st := statusOf(t, r, PathJSON)
		s = st.Series.Items[0]
		if len(s.Answers) == 8 && s.Answers[7].At.After(first[0].At) {
			break // the first answer has left the ring
		}
		if time.Now().After(deadline) {
			t.Fatalf("the series never had 8 answers after its first: %+v", s.Answers)
		}
		time.Sleep(120 * time.Millisecond)
	}
	for i := 1; i < len(s.Answers); i++ {
		if !s.Answers[i-1].At.After(s.Answers[i].At) || s.Answers[i].Outcome != "ok" {
			t.Errorf("answer %d: %+v after %+v, want newest first, each ok", i, s.Answers[i], s.Answers[i-1])
		}
	}
}

// Series due while rate_limit has no turn for them wait in their place:
// the page says the API waits for rate_limit until its next turn, with
// the series due, and how far the first fill is; the series never asked
// are "waiting for first call", none "failing". /metrics has no
// query_success 0 and no error for them, and no call was held back: the
// engine starts none it has no turn for. (Before, each was sent to the
// rate limit, failed with rate_limited and counted as an error.)
func TestPageShowsTheRateLimitHolding(t *testing.T) {
	r := newRig(t, fakeapi.Options{}, func(u string) string {
		return fmt.Sprintf(`
data:
  url: %s
  token_env: T
  rate_limit: 2
  timeout: 1s
  concurrency: 8
  metrics:
    - path: /v1/btc/market-data/open-interest
      window: hour
      exchange: [binance, okx, bybit, deribit, bitmex, kraken]
`, u)
	})
	body := r.scrape(t)
	// The engine publishes its fill beside the tuples' views, a moment
	// apart: the page is read again until the fill has caught up with
	// the second answer (a few milliseconds; seconds on a loaded machine).
	st := statusOf(t, r, PathJSON)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if f := fillOf(st); f != nil && f.Asked >= 2 {
			break
		}
		st = statusOf(t, r, PathJSON)
	}
	if st.States[StateFirst] != 4 || st.States[StateFailing] != 0 || st.States[StateFresh]+st.States[StateAwaiting] != 2 {
		t.Fatalf("states %v, want 2 of 6 series served and 4 waiting for their first call, none failing", st.States)
	}
	var data API
	for _, a := range st.APIs {
		if a.Name == "data" {
			data = a
		}
	}
	if w := data.Waiting; w == nil || w.Limit != "rate_limit" || w.Due != 4 || !w.Until.After(st.Generated) || w.Until.After(st.Generated.Add(61*time.Second)) {
		t.Errorf("the API's wait: %+v, want 4 series due waiting for rate_limit's next turn, within a minute", w)
	}
	if f := data.Fill; f == nil || f.Series != 6 || f.Asked != 2 || !strings.HasPrefix(f.Line, "filling: 2 of 6 series") {
		t.Errorf("the fill: %+v, want 2 of 6 series asked", f)
	}
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, "onchain_exporter_query_success{") && strings.HasSuffix(l, " 0") {
			t.Errorf("a series waiting has %s", l)
		}
	}
	for _, m := range []string{`onchain_exporter_api_errors_total{api="data",code="rate_limited"}`,
		`onchain_exporter_calls_held_back_total{api="data",limit="rate_limit"}`} {
		if v, _ := metricValue(body, m); v != 0 {
			t.Errorf("%s %v, want 0", m, v)
		}
	}
	if v, _ := metricValue(body, `onchain_exporter_tuples_due{api="data"}`); v != 4 {
		t.Errorf("tuples_due %v, want 4", v)
	}
	_, page := r.get(t, "/")
	if !strings.Contains(page, "4 series due, waiting in their place for a turn of rate_limit") || !strings.Contains(page, "filling: 2 of 6 series") {
		t.Errorf("the page does not say what the series wait for")
	}
}

// fillOf is the data API's fill on a status page, nil without one.
func fillOf(st Status) *Fill {
	for _, a := range st.APIs {
		if a.Name == "data" {
			return a.Fill
		}
	}
	return nil
}
