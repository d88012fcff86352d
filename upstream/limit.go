package upstream

import (
	"context"
	"errors"
	"math"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
)

// limitMargin widens the window of rate_limit beyond 60 s, so that two
// requests a window apart are not one minute apart upstream after jitter.
const limitMargin = 250 * time.Millisecond

// minuteCap is rate_limit as a hard cap, not an average: it keeps the
// send times of the last window and lets one more request go only while
// fewer than n are that recent, so no window, wherever it starts, holds
// more than n. Every request on the wire takes a turn (limitTransport).
// A rate_limit of r per minute is n = ⌊r⌋ per 60 s plus the margin; below
// 1, one per 60/r seconds. It runs on the client's clock.
type minuteCap struct {
	now   func() time.Time
	sleep func(context.Context, time.Duration) error

	mu     sync.Mutex
	n      int
	window time.Duration
	sent   []time.Time // within the window, oldest first, at most n
}

func newMinuteCap(perMinute float64, now func() time.Time) *minuteCap {
	c := &minuteCap{now: now, sleep: sleepCtx}
	c.resize(perMinute)
	return c
}

// capShape turns a per-minute rate into a count per window, at most
// config.MaxRateLimit: the cap keeps one time per turn, so no number read
// from outside may size it.
func capShape(perMinute float64) (int, time.Duration) {
	switch {
	case perMinute >= 1 && perMinute <= config.MaxRateLimit:
		return int(math.Floor(perMinute)), time.Minute + limitMargin
	case perMinute > 0 && perMinute < 1:
		return 1, time.Duration(float64(time.Minute)/perMinute) + limitMargin
	}
	return config.MaxRateLimit, time.Minute + limitMargin // NaN too
}

// resize sets a new rate, keeping the send times already spent.
func (c *minuteCap) resize(perMinute float64) {
	n, window := capShape(perMinute)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n, c.window = n, window
	if len(c.sent) > n {
		c.sent = append([]time.Time(nil), c.sent[len(c.sent)-n:]...)
	}
}

// expire drops the send times that left the window at now; the lock is
// held.
func (c *minuteCap) expire(now time.Time) {
	i := 0
	for i < len(c.sent) && !c.sent[i].Add(c.window).After(now) {
		i++
	}
	if i > 0 {
		c.sent = append(c.sent[:0], c.sent[i:]...)
	}
}

// take spends a turn now if one is free, or says how long until the
// oldest send leaves the window. giveBack returns it, by the time take
// returned, when the request was not sent after all.
func (c *minuteCap) take() (wait time.Duration, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if c.expire(now); len(c.sent) >= c.n {
		return c.sent[0].Add(c.window).Sub(now), time.Time{}
	}
	c.add(now)
	return 0, now
}

// add counts a send at t, keeping the times in order (a clock that
// stepped back puts it before later ones); the lock is held.
func (c *minuteCap) add(t time.Time) {
	i := len(c.sent)
	for i > 0 && c.sent[i-1].After(t) {
		i--
	}
	c.sent = slices.Insert(c.sent, i, t)
	if len(c.sent) > c.n {
		c.sent = c.sent[len(c.sent)-c.n:]
	}
}

// giveBack frees a turn taken at `at` for a request that was not sent
// (the budget had no call for it), if it is still there.
func (c *minuteCap) giveBack(at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(c.sent) - 1; i >= 0; i-- {
		if c.sent[i].Equal(at) {
			c.sent = append(c.sent[:i], c.sent[i+1:]...)
			return
		}
	}
}

// observe counts n requests another cluster member sent, as sent now.
func (c *minuteCap) observe(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	c.expire(now)
	for range min(n, c.n) {
		c.add(now)
	}
}

// wait blocks until the request may go, or fails at once when its turn
// would come after the context's deadline.
func (c *minuteCap) wait(ctx context.Context) (at time.Time, err error) {
	for {
		d, at := c.take()
		if d == 0 {
			return at, nil
		}
		// The deadline is real time, whatever clock the cap keeps.
		if dl, ok := ctx.Deadline(); ok && d > time.Until(dl) {
			return time.Time{}, &Error{Code: "rate_limited", Message: "own rate limit (rate_limit) would pass the deadline", HeldBack: true, RetryAfter: d}
		}
		if err := c.sleep(ctx, d); err != nil {
			return time.Time{}, err
		}
	}
}

// Turn is a turn of rate_limit taken before the call it is for: the
// engine takes one (Client.TakeTurn) so that it starts no refresh the cap
// has no turn for, and hands it to the call (WithTurn), whose first
// request spends it. Release gives it back when no request did. A zero
// Turn is one of a client without rate_limit.
type Turn struct {
	c    *minuteCap
	at   time.Time
	used atomic.Bool
}

// TakeTurn takes a turn of rate_limit now when one is free; when none is,
// it says when the next frees. Without rate_limit every call has one.
func (u *Client) TakeTurn() (*Turn, time.Time) {
	c := u.rateCap()
	if c == nil {
		return &Turn{}, time.Time{}
	}
	d, at := c.take()
	if d > 0 {
		return nil, c.now().Add(d)
	}
	return &Turn{c: c, at: at}, time.Time{}
}

// Release gives the turn back unless a request spent it.
func (t *Turn) Release() {
	if t.spend() {
		t.c.giveBack(t.at)
	}
}

// spend takes the turn for a request, once.
func (t *Turn) spend() bool { return t != nil && t.c != nil && t.used.CompareAndSwap(false, true) }

// turnKey carries a Turn in a request's context (WithTurn).
type turnKey struct{}

// WithTurn hands a turn taken before the call to its first request; a
// retry or a redirect hop takes its own.
func WithTurn(ctx context.Context, t *Turn) context.Context {
	return context.WithValue(ctx, turnKey{}, t)
}

// limitTransport makes every request that reaches the network wait for
// its turn under the API's rate_limit.
type limitTransport struct {
	next http.RoundTripper
	cap  func() *minuteCap // the client's, nil without rate_limit
}

func (lt *limitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c := lt.cap()
	if c == nil {
		return lt.next.RoundTrip(req)
	}
	var at time.Time
	var err error
	if t, _ := req.Context().Value(turnKey{}).(*Turn); t != nil && t.c == c && t.spend() {
		at = t.at // taken before the call (the refresh engine)
	} else {
		at, err = c.wait(req.Context())
	}
	if err != nil {
		closeBody(req)
		return nil, err
	}
	resp, err := lt.next.RoundTrip(req)
	var e *Error
	if errors.As(err, &e) && e.HeldBack {
		c.giveBack(at) // not sent (the day's budget): the turn is unused
	}
	return resp, err
}

func (lt *limitTransport) CloseIdleConnections() { closeIdle(lt.next) }
