package collector

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestFutureRowIsNotTrusted: an answer whose newest row is dated in 9999
// is served from its newest row before now, the bad row is counted under
// its own code, and polling goes on as the row before it plans: once the
// upstream is sane again, the next rows are fetched as they appear.
func TestFutureRowIsNotTrusted(t *testing.T) {
	c := newClock()
	var future atomic.Bool
	future.Store(true)
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		now := c.Now().UTC()
		last := now.Truncate(10 * time.Minute).Add(-10 * time.Minute) // the newest closed interval
		var rows []map[string]any
		if future.Load() {
			rows = append(rows, map[string]any{"datetime": "9999-12-31 23:00:00", "events_mint_count": 999})
		}
		for i := 0; i < 3; i++ {
			at := last.Add(-time.Duration(i) * 10 * time.Minute)
			rows = append(rows, map[string]any{"datetime": at.Format("2006-01-02 15:04:05"), "events_mint_count": at.Minute()})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{
			"status": map[string]any{"code": 200, "message": "success"},
			"result": map[string]any{"window": "10min", "data": rows},
		})
	}))
	t.Cleanup(srv.Close)
	e := envOn(t, c, srv, `
data:
  url: "{{URL}}"
  token_env: T
  metrics:
    - path: /v2/network/events-count
      window: 10min
      asset: usdt
`)

	body := e.scrape("10")
	want := c.Now().UTC().Truncate(10 * time.Minute).Add(-10 * time.Minute)
	if got := counter(body, `onchain_data_timestamp_seconds{`); got != float64(want.Unix()) {
		t.Errorf("row served dated %v, want the newest before now, %s (%d):\n%s", got, want, want.Unix(), strings.Join(lines(body, "onchain_"), "\n"))
	}
	if got := seriesValue(body, "onchain_exporter_api_errors_total", "api", "data", "code", "future_row"); got != "1" {
		t.Errorf("api_errors_total{code=future_row} = %q, want 1", got)
	}
	if got := seriesValue(body, "onchain_exporter_query_success", "api", "data"); got != "1" {
		t.Errorf("query_success = %q: the rows before now were good", got)
	}

	// The upstream is sane again: the engine keeps polling as its rows
	// say, not from 9999.
	future.Store(false)
	before := calls.Load()
	for i := 0; i < 6; i++ {
		c.Add(10 * time.Minute)
		body = e.scrape("10")
	}
	if n := calls.Load() - before; n < 6 {
		t.Errorf("%d calls in an hour of 10min rows after a row dated 9999, want one a row at least", n)
	}
	want = c.Now().UTC().Truncate(10 * time.Minute).Add(-10 * time.Minute)
	if got := counter(body, `onchain_data_timestamp_seconds{`); got != float64(want.Unix()) {
		t.Errorf("after an hour, the row served is dated %v, want %d", got, want.Unix())
	}
}
