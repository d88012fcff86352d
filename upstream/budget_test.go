package upstream

import (
	"context"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/budget"
	"github.com/onchain-exporter/onchain_exporter/config"
)

// The upstream's own daily limit (X-Daily-Limit) lowers daily_budget when
// it is smaller; a value outside the sane range, or not a whole number, is
// not taken.
func TestUpstreamDailyLimitLowersTheBudget(t *testing.T) {
	for _, tc := range []struct {
		limit, used string
		want        int
	}{
		{"40", "3", 40},
		{"500", "3", 100}, // larger than daily_budget: ours applies
		{"1e26", "3", 100},
		{"NaN", "", 100},
		{"12.5", "", 100},
		{"-5", "", 100},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("X-Daily-Limit", tc.limit)
			w.Header().Set("X-Daily-Used", tc.used)
			_, _ = w.Write([]byte(`{"status":{"code":200,"message":"success"},"result":{"data":[]}}`))
		}))
		u, _ := url.Parse(srv.URL)
		pool := NewPool(prometheus.NewRegistry(), time.Now, log.NewNopLogger())
		c := pool.Client(&config.API{Name: config.APIData, URL: u, Concurrency: 1, Timeout: 10 * time.Second, DailyBudget: 100})
		if _, err := c.Get(context.Background(), "/v1/btc/network-data/supply", nil, true); err != nil {
			t.Fatal(err)
		}
		if got := c.Budget().Limit(time.Now()); got != tc.want {
			t.Errorf("X-Daily-Limit %q: the budget in force is %d, want %d", tc.limit, got, tc.want)
		}
		pool.Close()
		srv.Close()
	}
}

// A call whose reservation cannot be written (a full disk under
// --storage.path) never leaves: it is held back with the reason, and the
// upstream sees nothing.
func TestBudgetReservationFailureHoldsTheCall(t *testing.T) {
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits++
		_, _ = w.Write([]byte(`{"status":{"code":200,"message":"success"},"result":{"data":[]}}`))
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	pool := NewPool(prometheus.NewRegistry(), time.Now, log.NewNopLogger())
	defer pool.Close()
	c := pool.Client(&config.API{Name: config.APIData, URL: u, Concurrency: 1, Timeout: 10 * time.Second, DailyBudget: 960})
	c.Budget().SetReserver(func(budget.Saved) error { return errors.New("no space left on device") })
	_, err := c.Get(context.Background(), "/v1/btc/network-data/supply", nil, true)
	var ue *Error
	if !errors.As(err, &ue) || ue.Code != "budget_exhausted" || !ue.HeldBack ||
		ue.Message != "the day's call count cannot be written to the storage directory, so the call is held back: no space left on device" {
		t.Fatalf("Get = %v, want the call held back for the reservation", err)
	}
	if hits != 0 {
		t.Errorf("the upstream got %d requests", hits)
	}
}

// A request rate_limit holds back is not sent, so it spends none of the
// day's budget: with more requests than turns in a minute, the budget
// counts exactly the requests the upstream saw. (The budget was taken
// before the turn: every held-back request spent a call of the day, a
// file of 79 series under a plan's 15 a minute spent 2 011 calls in two
// hours for 17 sent, and then no call was left.)
func TestHeldBackByRateLimitSpendsNoBudget(t *testing.T) {
	var hits int
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		hits++
		mu.Unlock()
		_, _ = w.Write([]byte(`{"status":{"code":200,"message":"success"},"result":{"data":[]}}`))
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	pool := NewPool(prometheus.NewRegistry(), time.Now, log.NewNopLogger())
	t.Cleanup(pool.Close)
	c := pool.Client(&config.API{Name: config.APIData, URL: u, Concurrency: 4, Timeout: 10 * time.Second, DailyBudget: 1000, RateLimit: 3})
	held := 0
	for range 10 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second) // a turn a minute away is past it
		_, err := c.Get(ctx, "/v1/btc/network-data/supply", nil, true)
		cancel()
		if e := AsErrorOrNil(err); e != nil && e.HeldBack {
			held++
		} else if err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if held == 0 || hits+held != 10 {
		t.Fatalf("%d sent, %d held back by rate_limit 3, want 3 and 7", hits, held)
	}
	if used := c.Budget().Used(time.Now()); used != hits {
		t.Errorf("the day's budget counts %d calls for %d sent", used, hits)
	}
}

// A request the day's budget refuses after it had its turn under
// rate_limit gives the turn back: refusals of the budget do not use up
// the minute's turns of the requests that can go.
func TestBudgetRefusalGivesTheTurnBack(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"status":{"code":200,"message":"success"},"result":{"data":[]}}`))
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	pool := NewPool(prometheus.NewRegistry(), time.Now, log.NewNopLogger())
	t.Cleanup(pool.Close)
	c := pool.Client(&config.API{Name: config.APIData, URL: u, Concurrency: 1, Timeout: 10 * time.Second, DailyBudget: 1, RateLimit: 3})
	if _, err := c.Get(context.Background(), "/v1/btc/network-data/supply", nil, true); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := c.Get(ctx, "/v1/btc/network-data/supply", nil, true)
		cancel()
		if e := AsErrorOrNil(err); e == nil || e.Code != "budget_exhausted" {
			t.Fatalf("request %d past the budget of 1: %v, want budget_exhausted (not rate_limited: the refusals gave their turns back)", i+2, err)
		}
	}
	if d, _ := c.rateCap().take(); d != 0 {
		t.Errorf("no turn left under rate_limit 3 after one request sent: the budget's refusals kept theirs")
	}
}

// A daily_budget the key's plan gives (the file sets none) is in force
// on the client the engine calls through, whatever the client built
// before the plan was read: the first start lists and reads the plan
// through a client of the file's section, which has no budget; the
// section with the plan's limits then takes over that client's count of
// the day, and its later changes (a reload, a plan that changed) do too.
// (The budget was left out of the client's identity, so the client built
// before the plan stayed in force: a basic key's 890 a day was shown in
// the log and never enforced, 1 197 calls in 45 s.)
func TestDailyBudgetFromThePlanIsEnforced(t *testing.T) {
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits++
		_, _ = w.Write([]byte(`{"status":{"code":200,"message":"success"},"result":{"data":[]}}`))
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	now := time.Date(2026, 11, 29, 0, 30, 0, 0, time.UTC)
	pool := NewPool(prometheus.NewRegistry(), func() time.Time { return now }, log.NewNopLogger())
	defer pool.Close()
	file := &config.API{Name: config.APIData, URL: u, Concurrency: 1, Timeout: 10 * time.Second}
	first, release := pool.Candidate(file) // the first start: the plan is read through it
	defer release()
	if _, err := first.Get(context.Background(), "/v1/btc/network-data/supply", nil, true); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		budget int
	}{
		{"the plan read at start (a day's allowance)", 890},
		{"a reload, the same plan", 890},
		{"the plan changed (an hour's allowance)", 20000},
		{"the plan changed back", 890},
	} {
		withPlan := *file
		withPlan.DailyBudget, withPlan.LimitsFromPlan = tc.budget, "PLAN"
		c := pool.Client(&withPlan)
		if got := c.Budget().Limit(now); got != tc.budget {
			t.Errorf("%s: the budget in force is %d, want %d", tc.name, got, tc.budget)
		}
		if got := c.Budget().Used(now); got < 1 {
			t.Errorf("%s: %d calls counted today, want the call made before the plan was read", tc.name, got)
		}
	}
	// Enforced: at 00:30 UTC a budget of 890 allows its share of the day
	// so far and its burst (about 9 + 18 calls), never hundreds.
	withPlan := *file
	withPlan.DailyBudget, withPlan.LimitsFromPlan = 890, "PLAN"
	c := pool.Client(&withPlan)
	sent := hits
	for range 200 {
		if _, err := c.Get(context.Background(), "/v1/btc/network-data/supply", nil, true); err != nil {
			break
		}
	}
	if n := hits - sent; n > 40 {
		t.Errorf("%d calls went out at 00:30 UTC under a daily budget of 890 from the plan", n)
	}
}

// No rate read from outside sizes anything: a client of any rate_limit,
// however it got into the section, is built, resized and called without
// a panic, and holds at most config.MaxRateLimit turns. (A plan allowing
// 1 099 511 627 776 requests a second made a ring of send times of that
// many a minute: makeslice panicked at every start.)
func TestAnyRateLimitBuildsAClient(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"status":{"code":200,"message":"success"},"result":{"data":[]}}`))
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	pool := NewPool(prometheus.NewRegistry(), time.Now, log.NewNopLogger())
	defer pool.Close()
	for _, rate := range []float64{1099511627776 * 60, 1e13, math.Inf(1), math.NaN(), math.MaxFloat64, config.MaxRateLimit} {
		c := pool.Client(&config.API{Name: config.APIData, URL: u, Concurrency: 1, Timeout: 10 * time.Second, RateLimit: rate})
		if _, err := c.Get(context.Background(), "/v1/btc/network-data/supply", nil, true); err != nil {
			t.Errorf("rate_limit %v: %v", rate, err)
		}
		if lim := c.rateCap(); lim != nil && len(lim.sent) > config.MaxRateLimit {
			t.Errorf("rate_limit %v: %d turns kept", rate, len(lim.sent))
		}
	}
}
