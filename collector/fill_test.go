package collector

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/expand"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/testtool"
	"github.com/onchain-exporter/onchain_exporter/testtool/simclock"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// fillRun is an exporter on a configuration of a few hundred series
// under a rate_limit, on simulated time, whose calls are timed as they
// reach the fake.
type fillRun struct {
	t     *testing.T
	clock *simclock.Clock
	fake  *fakeapi.Server
	exp   *Exporter
	logs  *testtool.LogBuffer
	n     int // tuples

	mu       sync.Mutex
	arrivals []time.Time // data calls, on the simulated clock
	requests []string    // and what each asked
}

func newFillRun(t *testing.T, yml string) *fillRun {
	t.Helper()
	r := &fillRun{t: t}
	u := testtool.StartFake(t, fakeapi.Options{}, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if !strings.Contains(req.URL.Path, "discovery") && !strings.Contains(req.URL.Path, "/my/") {
				r.mu.Lock()
				r.arrivals = append(r.arrivals, r.clock.Now())
				r.requests = append(r.requests, req.URL.Path+"?"+req.URL.RawQuery)
				r.mu.Unlock()
			}
			next.ServeHTTP(w, req)
		})
	})
	r.clock, r.fake = u.Clock, u.Fake
	reg := prometheus.NewRegistry()
	r.logs = &testtool.LogBuffer{}
	logger := log.NewLogfmtLogger(r.logs)
	pool := upstream.NewPool(reg, r.clock.Now, logger)
	t.Cleanup(pool.Close)
	x := expand.New(logger, expand.Options{Now: r.clock.Now, Clients: pool})
	cfg, err := x.Expand(context.Background(), testtool.Config(t, u.Srv.URL, yml))
	if err != nil {
		t.Fatal(err)
	}
	r.n = len(cfg.Tuples)
	r.mu.Lock()
	r.arrivals = nil // the listing calls
	r.mu.Unlock()
	r.exp, err = New(cfg, logger, reg, Options{Clock: r.clock, Clients: pool, IdleAfter: neverIdle})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.exp.Close)
	return r
}

// step moves the clock by d, timer by timer, letting the engine do what
// is due at each, and scrapes at the end.
func (r *fillRun) step(d time.Duration) string {
	end := r.clock.Now().Add(d)
	for range 100_000 {
		r.exp.Settle()
		next, ok := r.clock.Next()
		if !ok || next.After(end) {
			break
		}
		if next.After(r.clock.Now()) {
			r.clock.Set(next)
		} else {
			r.clock.Fire()
		}
	}
	r.clock.Set(end)
	return testtool.Scrape(r.t, r.exp, "10")
}

// firstCalls counts the distinct requests the fake saw, and the calls up
// to the first of the last one: every series is asked once before any is
// asked twice when that is the number of series.
func (r *fillRun) firstCalls() (distinct, before int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := map[string]bool{}
	for i, q := range r.requests {
		if !seen[q] {
			seen[q] = true
			before = i + 1
		}
	}
	return len(seen), before
}

// calls are the data calls that reached the fake by now, and the most in
// any window of 60 s.
func (r *fillRun) calls() (int, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a := slices.Clone(r.arrivals)
	slices.SortFunc(a, func(x, y time.Time) int { return x.Compare(y) })
	worst := 0
	for i, j := 0, 0; i < len(a); i++ {
		for a[i].Sub(a[j]) >= time.Minute {
			j++
		}
		worst = max(worst, i-j+1)
	}
	return len(a), worst
}

const fillConfig = `
data:
  url: "{{URL}}"
  token_env: T
  rate_limit: 20
  concurrency: 8
  metrics:
    - path: /v1/btc/market-data/open-interest
      window: [min, hour, day]
      exchange: all
    - path: /v1/btc/exchange-flows/reserve
      window: [min, hour, day]
      exchange: all
`

// TestFirstFillAtTheRateLimit: 75 series under rate_limit 20,
// on simulated time. Calls go out at the rate limit, minute after minute,
// until every series has its first value, and no series is asked twice
// before then (the min series are due again every minute); the fill ends
// within 1.1 times the series over the rate. A call the rate limit has no
// turn for is a wait, not a failure: no warning line, no
// api_errors_total, query_success never 0 for a series with a value; one
// line a minute says how far the fill is. (Before, every series the
// minute's turns did not reach failed with rate_limited, logged a
// warning, and was planned for the next free turn, taking the turns of
// the series never asked.)
func TestFirstFillAtTheRateLimit(t *testing.T) {
	r := newFillRun(t, fillConfig)
	if r.n < 60 {
		t.Fatalf("%d tuples: the test needs a fill of minutes", r.n)
	}
	const rate = 20
	limit := time.Duration(1.1 * float64(r.n) / rate * float64(time.Minute))
	start := r.clock.Now()
	var filledAt time.Time
	var callsAtFill int
	minute, lastMinuteCalls := start.Add(time.Minute), 0
	for r.clock.Now().Sub(start) < limit+5*time.Minute {
		body := r.step(5 * time.Second)
		now := r.clock.Now()
		unasked := counter(body, `onchain_exporter_tuples_unasked{api="data"}`)
		if got := counter(body, `onchain_exporter_api_errors_total{api="data",code="rate_limited"}`); got != 0 {
			t.Fatalf("at %v: %v calls held back counted as errors", now.Sub(start), got)
		}
		for _, line := range lines(body, "onchain_exporter_query_success") {
			if strings.HasSuffix(line, " 0") {
				t.Fatalf("at %v: a series has query_success 0 (%s); every call here succeeds or waits", now.Sub(start), line)
			}
		}
		calls, _ := r.calls()
		if !now.Before(minute) {
			// A minute passed: while series remain to fill, the rate
			// limit's turns were spent (no stall).
			if filledAt.IsZero() && calls-lastMinuteCalls < rate*9/10 {
				t.Errorf("minute to %v: %d calls with %v series left to fill; rate_limit allows %d", now.Sub(start), calls-lastMinuteCalls, unasked, rate)
			}
			minute, lastMinuteCalls = minute.Add(time.Minute), calls
		}
		if unasked == 0 && filledAt.IsZero() {
			filledAt, callsAtFill = now, calls
		}
	}
	calls, worst := r.calls()
	if worst > rate {
		t.Errorf("%d calls within 60 s; rate_limit is %d", worst, rate)
	}
	switch {
	case filledAt.IsZero():
		t.Fatalf("%d of %d series never asked after %v", r.n, r.n, r.clock.Now().Sub(start))
	case filledAt.Sub(start) > limit:
		t.Errorf("every series asked once after %v, more than 1.1 × %d series / %d a minute = %v", filledAt.Sub(start), r.n, rate, limit)
	}
	if firsts, before := r.firstCalls(); firsts != r.n || before > r.n {
		t.Errorf("%d calls up to the first call of the last of %d series (%d asked): some were asked twice first", before, r.n, firsts)
	}
	if callsAtFill > r.n+rate {
		t.Errorf("%d calls before every one of the %d series had its first answer", callsAtFill, r.n)
	}
	if calls <= callsAtFill {
		t.Errorf("no call after the fill (%d)", calls)
	}
	if w := r.logs.Count("level=warn"); w != 0 {
		t.Errorf("%d warning lines; the first was %s", w, firstLine(r.logs, "level=warn"))
	}
	fills := r.logs.Count("filling:")
	if minutes := int(filledAt.Sub(start) / time.Minute); fills > minutes || fills < minutes-1 {
		t.Errorf("%d lines about the fill over %v: want one a minute", fills, filledAt.Sub(start))
	}
	t.Logf("%d series asked once in %v (limit %v), %d calls then, %d after %v; %d lines about the fill: %s",
		r.n, filledAt.Sub(start), limit, callsAtFill, calls, r.clock.Now().Sub(start), fills, firstLine(r.logs, "filling:"))
}

// firstLine is the first line logged that holds sub.
func firstLine(l *testtool.LogBuffer, sub string) string {
	for _, line := range strings.Split(l.String(), "\n") {
		if strings.Contains(line, sub) {
			return line
		}
	}
	return ""
}
