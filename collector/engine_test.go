package collector

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/internal/clock"
	"github.com/onchain-exporter/onchain_exporter/testtool"
	"github.com/onchain-exporter/onchain_exporter/testtool/simclock"
)

// TestScrapeNeverWaitsForACall: on the real clock, once the first fill is
// done, a scrape is answered from what the engine's refreshes left while
// the refresh under way is held at the upstream: it cannot have waited
// for a call that only ends after it returns. The engine refreshes in the
// background, and the held call lands in the next scrape.
func TestScrapeNeverWaitsForACall(t *testing.T) {
	release := make(chan struct{})
	var hold atomic.Bool
	held := make(chan struct{}, 16)
	up := testtool.StartFake(t, fakeapi.Options{Now: time.Now}, func(fake http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if hold.Load() {
				held <- struct{}{}
				<-release
			}
			fake.ServeHTTP(w, r)
		})
	})
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	cfg := up.Config(t, `
data:
  url: "{{URL}}"
  token_env: T
  metrics:
    - path: /v1/btc/network-data/supply
      window: day
      cache_ttl: 1s
`)
	exp, err := New(cfg, log.NewNopLogger(), prometheus.NewRegistry(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer exp.Close()
	scrape := func() string {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", "600") // no deadline to hide behind
		rec := httptest.NewRecorder()
		exp.ServeHTTP(rec, req)
		return rec.Body.String()
	}
	first := scrape() // the first fill is awaited
	if len(lines(first, "onchain_supply{")) != 1 {
		t.Fatalf("first scrape has no value:\n%s", first)
	}
	hold.Store(true)
	select { // the engine refreshes on its own (cache_ttl 1s) and is held
	case <-held:
	case <-time.After(30 * time.Second):
		t.Fatal("the engine made no call in 30 s with a tuple due every second")
	}
	done := make(chan string)
	go func() { done <- scrape() }()
	select {
	case body := <-done:
		if len(lines(body, "onchain_supply{")) != 1 {
			t.Errorf("a scrape during a refresh lost the last good value:\n%s", body)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("a scrape waited for an upstream call (still waiting after 60 s)")
	}
	hold.Store(false)
	close(release)
}

// TestEngineIdlesWithoutScrapes: nobody scrapes, nothing is called. Before
// the first scrape the engine makes no call; a scrape's demand ends
// idleAfter after it.
func TestEngineIdlesWithoutScrapes(t *testing.T) {
	e := newEnv(t, supplyConfig, fakeapi.Options{})
	e.exp.Close()
	exp, err := New(e.parse(supplyConfig), log.NewNopLogger(), prometheus.NewRegistry(), Options{Clock: e.clock}) // idles after DefaultIdleAfter
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(exp.Close)
	e.exp = exp
	e.exp.Settle()
	if e.fake.Calls("data") != 0 {
		t.Fatalf("%d calls before any scrape", e.fake.Calls("data"))
	}
	e.scrape("10")
	calls := e.fake.Calls("data")
	if calls == 0 {
		t.Fatal("the first scrape filled nothing")
	}
	e.clock.Add(DefaultIdleAfter + time.Hour) // rows are due, nobody scraped since
	e.exp.Settle()
	if next, ok := e.clock.Next(); ok {
		t.Errorf("an idle engine armed a timer for %v", next)
	}
	if got := e.fake.Calls("data"); got != calls {
		t.Errorf("%d calls while nobody scraped", got-calls)
	}
	e.scrape("10") // demand again: the due rows are fetched
	e.exp.Settle()
	if got := e.fake.Calls("data"); got == calls {
		t.Error("a scrape after an idle spell did not wake the engine")
	}
}

// TestBudgetHeldRefreshKeepsTheValue: a refresh the daily budget holds
// back was never sent: the last good value stays served past
// max_staleness, and the series does not read as failing.
func TestBudgetHeldRefreshKeepsTheValue(t *testing.T) {
	e := newEnv(t, `
data:
  url: "{{URL}}"
  token_env: T
  daily_budget: 1000
  max_staleness: 1h
  metrics:
    - path: /v1/btc/network-data/supply
      window: hour
`, fakeapi.Options{})
	if body := e.scrape("10"); len(lines(body, "onchain_supply{")) != 1 {
		t.Fatalf("the first fill served nothing:\n%s", body)
	}
	calls := e.fake.Calls("data")
	b := engines(e.exp)[0].up.Budget()
	for i := 0; i < 3; i++ { // 6 h: rows are due; the day's calls are spent elsewhere
		// Spent as of the time the clock moves to, before it moves: the
		// engine's refreshes at that time find nothing left.
		at := e.clock.Now().Add(2 * time.Hour)
		for n := 0; n < 2000; n++ {
			if ok, _ := b.Take(at); !ok {
				break
			}
		}
		e.clock.Add(2 * time.Hour)
		body := e.scrape("10")
		if len(lines(body, "onchain_supply{")) != 1 {
			t.Fatalf("after %d h the value held back by the budget is no longer served:\n%s", 2*(i+1), body)
		}
		if got := valueOf(body, `onchain_exporter_query_success{api="data",asset="btc",endpoint="/v1/btc/network-data/supply",window="hour"}`); got != "1" {
			t.Errorf("query_success = %q while the budget held the refresh back", got)
		}
	}
	if got := e.fake.Calls("data"); got != calls {
		t.Errorf("%d calls though the budget had none", got-calls)
	}
}

// TestClockMovedWhilePlanningIsSeen: a test that moves the simulated clock
// while the engine plans (after it read the time, before it armed its
// timer) and then settles finds what is due at the new time done: the
// move fired no timer of this plan, so the engine plans again rather than
// arming its timer a whole move late.
func TestClockMovedWhilePlanningIsSeen(t *testing.T) {
	yml := testtool.DataSection + `    - path: /v1/btc/network-data/supply
      window: day
`
	e := newEnv(t, yml, fakeapi.Options{})
	e.exp.Close()
	clk := &movingClock{Clock: e.clock}
	exp, err := New(e.parse(yml), log.NewNopLogger(), prometheus.NewRegistry(), Options{Clock: clk, IdleAfter: neverIdle})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(exp.Close)
	e.exp = exp
	start := e.clock.Now()
	// The one tuple's first timer is armed when the first fill's refresh
	// ends: it is then due at its next row, well within two days.
	clk.jump.Store(int64(48 * time.Hour))
	e.scrape("10")
	e.exp.Settle()
	if got := e.clock.Now(); !got.Equal(start.Add(48 * time.Hour)) {
		t.Fatalf("the clock is at %v, want it moved by 48 h while the engine armed its timer", got)
	}
	if got := e.fake.Calls("data"); got != 2 {
		t.Errorf("%d calls: want the first fill and the refresh due after the move", got)
	}
}

// movingClock is a simulated clock that moves itself by jump, once, as
// the engine arms a timer: as if a test's Add landed while it planned.
type movingClock struct {
	*simclock.Clock
	jump atomic.Int64 // nanoseconds
}

func (c *movingClock) moves() {
	if d := c.jump.Swap(0); d != 0 {
		c.Add(time.Duration(d))
	}
}

func (c *movingClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	c.moves()
	return c.Clock.AfterFunc(d, f)
}

func (c *movingClock) At(t time.Time, f func()) clock.Timer {
	c.moves()
	return c.Clock.At(t, f)
}
