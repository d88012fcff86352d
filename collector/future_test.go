package collector

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/fakeapi"
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

// TestFutureRowTeachesNoDelay: answers whose only row is dated in 9999
// (an upstream gone wrong for a while) fail with future_row and are
// polled on, but teach the schedule nothing: once the upstream is sane
// again, the publication delay learned before stays where it was, and
// rows are served when they appear, not a back-off later.
func TestFutureRowTeachesNoDelay(t *testing.T) {
	c := newClock()
	var future atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := c.Now().UTC()
		var rows []map[string]any
		if off := now.Sub(now.Truncate(10 * time.Minute)); future.Load() && off < 3*time.Minute {
			rows = append(rows, map[string]any{"datetime": "9999-12-31 23:00:00", "events_mint_count": 999})
		} else {
			// Rows out as their interval closes.
			// (40 s after they close).
			last := now.Add(-40 * time.Second).Truncate(10 * time.Minute).Add(-10 * time.Minute)
			for i := 0; i < 3; i++ {
				at := last.Add(-time.Duration(i) * 10 * time.Minute)
				rows = append(rows, map[string]any{"datetime": at.Format("2006-01-02 15:04:05"), "events_mint_count": at.Minute()})
			}
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
	delay := func() float64 {
		return counter(e.serve("10"), `onchain_exporter_publication_delay_seconds{`)
	}
	e.scrape("10")
	runUntil(c, e.exp, c.Now().Add(2*time.Hour))
	before := delay()
	future.Store(true)
	runUntil(c, e.exp, c.Now().Add(25*time.Minute))
	future.Store(false)
	runUntil(c, e.exp, c.Now().Add(time.Hour))
	after := delay()
	body := e.serve("10")
	if got := seriesValue(body, "onchain_exporter_api_errors_total", "api", "data", "code", "future_row"); got == "" || got == "0" {
		t.Errorf("api_errors_total{code=future_row} = %q, want the future rows counted", got)
	}
	t.Logf("publication delay %v s before, %v s after", before, after)
	if after > before+1 {
		t.Errorf("the publication delay moved from %v s to %v s after answers of a row dated 9999", before, after)
	}
}

// runUntil moves the clock to end, stopping at every timer the engines
// armed: the production loop on simulated time.
func runUntil(c *fakeapi.SimClock, exp *Exporter, end time.Time) {
	for i := 0; i < 100_000; i++ {
		exp.Settle()
		next, ok := c.Next()
		if !ok || next.After(end) {
			break
		}
		if next.After(c.Now()) {
			c.Set(next)
		} else {
			c.Fire()
		}
	}
	if end.After(c.Now()) {
		c.Set(end)
	}
	exp.Settle()
}
