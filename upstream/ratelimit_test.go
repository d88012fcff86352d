package upstream

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/config"
)

// fakeCapClock drives a minuteCap on simulated time: a sleep moves the
// clock on.
type fakeCapClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeCapClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeCapClock) Sleep(_ context.Context, d time.Duration) error {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
	return nil
}

// worstWindow is the most sends in any closed window of length w.
func worstWindow(sent []time.Time, w time.Duration) int {
	sort.Slice(sent, func(i, j int) bool { return sent[i].Before(sent[j]) })
	worst := 0
	for i, j := 0, 0; i < len(sent); i++ {
		for sent[i].Sub(sent[j]) > w {
			j++
		}
		worst = max(worst, i-j+1)
	}
	return worst
}

// TestRateLimitIsAHardCap drives the cap of rate_limit greedily through
// five simulated minutes, a send every 5 ms whenever a turn is free: no
// 60 s window, closed at both ends and wherever it starts, sees more than
// ⌊rate_limit⌋ requests (one per 60/r s below 1), and a steady client
// gets close to the limit.
func TestRateLimitIsAHardCap(t *testing.T) {
	for _, rpm := range []float64{0.5, 1, 30, 60, 90.5, 120, 600, 1000} {
		clock := &fakeCapClock{now: time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)}
		c := newMinuteCap(rpm, clock.Now)
		start := clock.Now()
		var sent []time.Time
		for clock.Now().Sub(start) < 5*time.Minute {
			if d, _ := c.take(); d == 0 {
				sent = append(sent, clock.Now())
				continue
			}
			_ = clock.Sleep(context.Background(), 5*time.Millisecond)
		}
		allowed := int(rpm)
		if rpm < 1 {
			allowed = 1
			if w := worstWindow(sent, time.Duration(float64(time.Minute)/rpm)); w > 1 {
				t.Errorf("rate_limit %v: %d requests within %v", rpm, w, time.Duration(float64(time.Minute)/rpm))
			}
		}
		if w := worstWindow(sent, time.Minute); w > allowed {
			t.Errorf("rate_limit %v: %d requests in one 60 s window, the cap is %d", rpm, w, allowed)
		}
		if want := rpm * 5 * 0.95; float64(len(sent)) < want {
			t.Errorf("rate_limit %v: only %d requests in 5 minutes", rpm, len(sent))
		}
	}
}

// TestRateLimitWaitsOrGivesUp: a request waits for the oldest send to
// leave the window, and one whose turn would come after its deadline
// fails at once with rate_limited instead of holding the scrape.
func TestRateLimitWaitsOrGivesUp(t *testing.T) {
	clock := &fakeCapClock{now: time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)}
	c := newMinuteCap(2, clock.Now)
	c.sleep = clock.Sleep
	start := clock.Now()
	var at []time.Duration
	for i := 0; i < 4; i++ {
		if _, err := c.wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		at = append(at, clock.Now().Sub(start))
	}
	w := time.Minute + limitMargin
	if want := []time.Duration{0, 0, w, w}; !slices.Equal(at, want) {
		t.Errorf("four requests under rate_limit 2 went at %v, want %v", at, want)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := c.wait(ctx); err == nil || AsError(err).Code != "rate_limited" || clock.Now().Sub(start) != w {
		t.Errorf("a turn past the deadline: %v after %v", err, clock.Now().Sub(start))
	}
}

// TestRateLimitTurnTakenBeforeTheCall: a turn the refresh engine takes
// before it starts a call is the one the call's request spends; a turn
// no request spent is given back; none is taken when none is free, and
// the next free one is named.
func TestRateLimitTurnTakenBeforeTheCall(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		_, _ = w.Write([]byte(`{"status":{"code":200,"message":"success"},"result":{"data":[]}}`))
	}))
	defer srv.Close()
	clock := &fakeCapClock{now: time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)}
	u, _ := url.Parse(srv.URL)
	p := NewPool(prometheus.NewRegistry(), clock.Now, log.NewNopLogger())
	defer p.Close()
	c := p.Client(&config.API{Name: config.APIData, URL: u, Concurrency: 2, Timeout: 10 * time.Second, RateLimit: 2})
	first, _ := c.TakeTurn()
	second, _ := c.TakeTurn()
	if first == nil || second == nil {
		t.Fatal("no turn with the window empty")
	}
	if none, next := c.TakeTurn(); none != nil || !next.Equal(clock.Now().Add(time.Minute+limitMargin)) {
		t.Fatalf("a third turn under rate_limit 2 (%v), or the next named at %v", none, next)
	}
	// The first call spends its turn and waits for nothing (a wait would
	// pass the 1 s deadline); the second is never sent, and its turn goes
	// back.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := c.Get(WithTurn(ctx, first), "/v1/btc/network-data/supply", nil, true); err != nil || hits.Load() != 1 {
		t.Fatalf("a call with its turn: %v, %d requests", err, hits.Load())
	}
	first.Release() // spent: nothing to give back
	second.Release()
	if again, _ := c.TakeTurn(); again == nil {
		t.Fatal("the turn of a call never sent was not given back")
	}
	if none, _ := c.TakeTurn(); none != nil {
		t.Fatal("a spent turn was given back")
	}
}

// TestRateLimitCountsEveryRequestOnTheWire: with rate_limit 2, a call
// whose answer is a redirect (followed, within the host) and then a
// server fault (retried) puts three requests on the wire; the third must
// wait a minute, so under a 30 s deadline it is not sent, and the call's
// outcome is the 502 the upstream answered, not a hold. A rebuilt client of the same account (a new timeout) inherits the spent
// turns; one of another account starts afresh (its 502 and the retry).
func TestRateLimitCountsEveryRequestOnTheWire(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path == "/v1/btc/a/b" {
			http.Redirect(w, r, "/v1/btc/a/c", http.StatusFound)
			return
		}
		w.WriteHeader(http.StatusBadGateway)
	}))
	defer srv.Close()
	section := func(timeout time.Duration, token string) *config.API {
		yml := fmt.Sprintf("data:\n  url: %s\n  token_env: T\n  timeout: %s\n  rate_limit: 2\n  follow_redirects: true\n  metrics:\n    - path: /v1/btc/network-data/supply\n", srv.URL, timeout)
		cfg, err := config.Parse("test.yml", []byte(yml), func(string) string { return token })
		if err != nil {
			t.Fatal(err)
		}
		return cfg.APIs[config.APIData]
	}
	p := NewPool(prometheus.NewRegistry(), time.Now, log.NewNopLogger())
	defer p.Close()
	// Deadlines well under the minute a turn takes, and well over the
	// second a retry waits, however slow the machine.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := p.Client(section(time.Second, "k1")).Get(ctx, "/v1/btc/a/b", nil, false)
	if hits.Load() != 2 || AsError(err) == nil || AsError(err).HTTP != http.StatusBadGateway || AsError(err).HeldBack {
		t.Fatalf("%d requests on the wire (want 2: the redirect and its target, the retry held back); error %v, want the 502 answered", hits.Load(), err)
	}
	if _, err := p.Client(section(2*time.Second, "k1")).Get(ctx, "/v1/btc/a/c", nil, false); hits.Load() != 2 || AsError(err).Code != "rate_limited" {
		t.Errorf("a client rebuilt for the same account sent at once (%d requests, %v)", hits.Load(), err)
	}
	fresh, cancelFresh := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancelFresh()
	if _, err := p.Client(section(2*time.Second, "k2")).Get(fresh, "/v1/btc/a/c", nil, false); hits.Load() != 4 || AsError(err).HTTP != http.StatusBadGateway {
		t.Errorf("a client of another account: %d requests, %v", hits.Load(), err)
	}
}

// TestRateLimitCountsPeersCalls: in a cluster, the requests another member
// sent take turns of this member's rate_limit: the members together stay
// within it.
func TestRateLimitCountsPeersCalls(t *testing.T) {
	clock := &fakeCapClock{now: time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)}
	c := newMinuteCap(10, clock.Now)
	for range 4 {
		if d, _ := c.take(); d != 0 {
			t.Fatal("a turn refused with the window empty")
		}
	}
	c.observe(6) // the other member's six
	if wait, _ := c.take(); wait == 0 {
		t.Fatal("an eleventh request in the minute went out: the peer's calls were not counted")
	}
	_ = clock.Sleep(context.Background(), time.Minute+time.Second)
	if d, _ := c.take(); d != 0 {
		t.Fatal("no turn a minute later")
	}
}
