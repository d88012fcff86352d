package collector

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/schedule"
	"github.com/onchain-exporter/onchain_exporter/testtool"
	"github.com/onchain-exporter/onchain_exporter/testtool/simclock"
)

// eventsYAML is the tuple of these tests: stablecoin events, 10min rows.
const eventsYAML = `
data:
  url: "{{URL}}"
  token_env: T
  metrics:
    - path: /v2/network/events-count
      window: 10min
      asset: usdt
`

// eventsUpstream serves each request by answer, on 127.0.0.1, for the
// test's life.
func eventsUpstream(t *testing.T, answer func(w http.ResponseWriter)) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { answer(w) }))
	t.Cleanup(srv.Close)
	return srv
}

// answerEvents writes an answer of 10min rows.
func answerEvents(w http.ResponseWriter, rows []map[string]any) {
	_ = json.NewEncoder(w).Encode(map[string]any{
		"status": map[string]any{"code": 200, "message": "success"},
		"result": map[string]any{"window": "10min", "data": rows},
	})
}

// closedRows are the three rows up to the one starting at last, newest
// first, each valued by its minute.
func closedRows(last time.Time) []map[string]any {
	var rows []map[string]any
	for i := 0; i < 3; i++ {
		at := last.Add(-time.Duration(i) * 10 * time.Minute)
		rows = append(rows, map[string]any{"datetime": at.Format("2006-01-02 15:04:05"), "events_mint_count": at.Minute()})
	}
	return rows
}

// futureRow is a row dated in 9999.
var futureRow = map[string]any{"datetime": "9999-12-31 23:00:00", "events_mint_count": 999}

// TestFutureRowIsNotTrusted: an answer whose newest row is dated in 9999
// is served from its newest row before now, the bad row is counted under
// its own code, and polling goes on as the row before it plans: once the
// upstream is sane again, the next rows are fetched as they appear.
func TestFutureRowIsNotTrusted(t *testing.T) {
	c := newClock()
	var future atomic.Bool
	future.Store(true)
	var calls atomic.Int64
	srv := eventsUpstream(t, func(w http.ResponseWriter) {
		calls.Add(1)
		now := c.Now().UTC()
		last := now.Truncate(10 * time.Minute).Add(-10 * time.Minute) // the newest closed interval
		var rows []map[string]any
		if future.Load() {
			rows = append(rows, futureRow)
		}
		rows = append(rows, closedRows(last)...)
		answerEvents(w, rows)
	})
	e := envOn(t, c, srv, eventsYAML)

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
// (an upstream gone wrong for the first 3 minutes of every 10, for a
// while; then for two hours on end) fail with future_row and are polled
// on as a late row is, but teach the schedule nothing. While the upstream
// goes wrong, each row is fetched within the longest wait between polls
// of a late row (8 learn steps, 96 s for 10min rows) of the moment it
// answers with it again, after minutes of wrong answers as after hours
// (a failure's back-off, up to 5 min, left it unfetched longer); two
// hours of wrong answers cost a call every few learn steps, not one every
// step (600 calls); once the upstream is sane again, the publication
// delay learned before stays where it was.
func TestFutureRowTeachesNoDelay(t *testing.T) {
	c := newClock()
	var future, always atomic.Bool
	var mu sync.Mutex
	var wrong []time.Time // when the upstream answered while it went wrong for hours
	// late is, for each row fetched while the upstream went wrong, how
	// long after the upstream answered with it again (3 minutes into its
	// interval) it was first fetched.
	late := map[time.Time]time.Duration{}
	srv := eventsUpstream(t, func(w http.ResponseWriter) {
		now := c.Now().UTC()
		if always.Load() {
			mu.Lock()
			wrong = append(wrong, now)
			mu.Unlock()
		}
		var rows []map[string]any
		if off := now.Sub(now.Truncate(10 * time.Minute)); always.Load() || future.Load() && off < 3*time.Minute {
			rows = append(rows, futureRow)
		} else {
			// Rows out as their interval closes.
			// (40 s after they close).
			last := now.Add(-40 * time.Second).Truncate(10 * time.Minute).Add(-10 * time.Minute)
			if future.Load() {
				mu.Lock()
				if _, ok := late[last]; !ok {
					late[last] = now.Sub(last.Add(10*time.Minute + 3*time.Minute))
				}
				mu.Unlock()
			}
			rows = append(rows, closedRows(last)...)
		}
		answerEvents(w, rows)
	})
	e := envOn(t, c, srv, eventsYAML)
	delay := func() float64 {
		return counter(e.serve("10"), `onchain_exporter_publication_delay_seconds{`)
	}
	e.scrape("10")
	runUntil(c, e.exp, c.Now().Add(2*time.Hour))
	before := delay()
	future.Store(true)
	runUntil(c, e.exp, c.Now().Add(25*time.Minute))
	mu.Lock()
	if len(late) < 2 {
		t.Errorf("%d rows fetched while the upstream went wrong, want two at least", len(late))
	}
	// The longest wait between polls of a late 10min row: 8 learn steps
	// of 12 s (schedule.Policy.LateDoublings).
	const lateWait = 96 * time.Second
	for row, d := range late {
		if d > lateWait {
			t.Errorf("the %s row was fetched %s after the upstream answered with it again: the future rows before it backed the schedule off", row.Format(time.TimeOnly), d)
		}
	}
	mu.Unlock()
	// Two hours of wrong answers on end: a call every few learn steps,
	// and never a longer wait than a late row's between two.
	always.Store(true)
	runUntil(c, e.exp, c.Now().Add(2*time.Hour))
	always.Store(false)
	future.Store(false)
	mu.Lock()
	spent, longest := len(wrong), time.Duration(0)
	for i := 1; i < len(wrong); i++ {
		longest = max(longest, wrong[i].Sub(wrong[i-1]))
	}
	mu.Unlock()
	// At most one call every 8 learn steps, and a few more while the
	// waits widen: about 80 (a call every learn step: 600).
	if most := int(2*time.Hour/lateWait) + 10; spent > most {
		t.Errorf("two hours of answers from the future cost %d calls, want at most %d: polled every learn step", spent, most)
	}
	if longest > lateWait {
		t.Errorf("while the upstream answered from the future, %s passed between two polls: a row it answers again waits that long, want at most %s", longest, lateWait)
	}
	t.Logf("two hours of answers from the future: %d calls, at most %s apart", spent, longest)
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
func runUntil(c *simclock.Clock, exp *Exporter, end time.Time) {
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

// TestFutureDatedPeerEstimateTeachesNothing: a peer's row whose learned
// publication delay is dated in 9999 (the estimate's newest row, Seen) and
// says rows come 54 s after their interval closes, when they come 1.25 s
// after, teaches this member's schedule nothing: the delay it learned
// stays, and rows are fetched as soon after they appear as before. (Taken
// as it came, such an estimate moved the learned delay to 54 s for good:
// no row could be newer than its Seen, so nothing learned later replaced
// it, and every row was served about 55 s after it appeared.)
func TestFutureDatedPeerEstimateTeachesNothing(t *testing.T) {
	c := newClock()
	const pub = 1250 * time.Millisecond
	var mu sync.Mutex
	found := map[time.Time]time.Duration{} // a row's interval start: how long after it appeared it was first fetched
	srv := eventsUpstream(t, func(w http.ResponseWriter) {
		now := c.Now().UTC()
		last := now.Add(-pub).Truncate(10 * time.Minute).Add(-10 * time.Minute) // out pub after its interval closes
		mu.Lock()
		if _, ok := found[last]; !ok {
			found[last] = now.Sub(last.Add(10 * time.Minute).Add(pub))
		}
		mu.Unlock()
		var rows []map[string]any
		rows = append(rows, closedRows(last)...)
		answerEvents(w, rows)
	})
	// A member alone in its cluster: it owns the tuple, and a row of its
	// own name is its owner's.
	r := startReplica(t, "a", eventsYAML, &testtool.Upstream{Clock: c, Srv: srv})
	e := r.env
	// worstLag is the latest a row that appeared since from was fetched
	// after it appeared.
	worstLag := func(from time.Time) time.Duration {
		mu.Lock()
		defer mu.Unlock()
		worst := time.Duration(0)
		for start, lag := range found {
			if start.Add(10*time.Minute+pub).After(from) && lag > worst {
				worst = lag
			}
		}
		return worst
	}
	delay := func() float64 {
		return counter(e.serve("10"), `onchain_exporter_publication_delay_seconds{`)
	}
	// learned is the publication delay the engine's schedule holds for
	// the tuple's key now (the gauge shows it once the next row is found).
	learned := func() time.Duration {
		eng := engines(e.exp)[0]
		eng.mu.Lock()
		key := eng.states[0].delayKey()
		eng.mu.Unlock()
		return eng.sched.book.Publication(key, 10*time.Minute)
	}
	e.scrape("10")
	runUntil(c, e.exp, c.Now().Add(3*time.Hour))
	before, lagBefore, learnedBefore := delay(), worstLag(c.Now().Add(-2*time.Hour)), learned()
	if lagBefore > 10*time.Second {
		t.Fatalf("rows fetched up to %s after they appear before any peer's row: the schedule did not learn the delay", lagBefore)
	}

	// A peer's row of the tuple, newer than this member's, carrying an
	// estimate dated in 9999.
	var rows []peerRow
	for _, eng := range engines(e.exp) {
		rows = eng.appendRows(rows, r.peer)
	}
	if len(rows) != 1 {
		t.Fatalf("%d rows, want the tuple's one", len(rows))
	}
	row := rows[0]
	row.State.LastAttempt, row.State.LastSuccess = schedule.InstantOf(c.Now()), schedule.InstantOf(c.Now())
	row.Delay = &schedule.Estimate{First: 10*time.Minute + 54*time.Second, Depth: time.Second, Learned: true, Rows: 50,
		Seen: time.Date(9999, 12, 31, 23, 50, 0, 0, time.UTC)}
	b, err := json.Marshal(row)
	if err != nil {
		t.Fatal(err)
	}
	if err := (replicated{e.exp}).Merge(b); err != nil {
		t.Fatal(err)
	}
	merged := c.Now()
	if got := learned(); (got - learnedBefore).Abs() > time.Second {
		t.Errorf("the schedule's publication delay moved from %s to %s on a peer's estimate dated 9999", learnedBefore, got)
	}
	runUntil(c, e.exp, c.Now().Add(3*time.Hour))
	after, lagAfter := delay(), worstLag(merged)
	t.Logf("publication delay %v s before, %v s after; rows fetched at worst %s after they appear before, %s after", before, after, lagBefore, lagAfter)
	if after > before+1 {
		t.Errorf("the publication delay moved from %v s to %v s after a peer's estimate dated 9999", before, after)
	}
	if lagAfter > lagBefore+5*time.Second {
		t.Errorf("rows fetched up to %s after they appear after a peer's estimate dated 9999, %s before", lagAfter, lagBefore)
	}
	// The row itself was good, newer and its owner's: taken, its
	// estimate left out.
	if got := seriesValue(e.serve("10"), "onchain_exporter_cluster_rows_received_total", "api", "data"); got != "1" {
		t.Errorf("cluster_rows_received_total = %q, want the row taken (1): the test did not reach the estimate", got)
	}
}
