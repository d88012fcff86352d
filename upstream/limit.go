package upstream

import (
	"context"
	"errors"
	"math"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
)

// limitMargin widens the window of rate_limit beyond 60 s, so that two
// requests a window apart here are not counted in one minute upstream
// after a little network jitter.
const limitMargin = 250 * time.Millisecond

// minuteCap is rate_limit as a hard cap rather than an average: it keeps
// the send times of the requests of the last window, oldest first, and
// lets one more go only while fewer than n are that recent. So no window
// of that length, wherever it starts, holds more than n requests. Every
// request on the wire takes a turn (limitTransport): first tries, retries
// and redirect hops alike. The concurrency cap bounds how many go out at
// once; the cap does not spread them.
//
// A rate_limit of r per minute is n = ⌊r⌋ requests per 60 s (plus the
// margin); below 1 it is one request per 60/r seconds. It runs on the
// client's clock, the one its pauses and budget run on: the real one in
// production, a simulated one in tests and benchmarks.
type minuteCap struct {
	now   func() time.Time
	sleep func(context.Context, time.Duration) error

	mu     sync.Mutex
	n      int
	window time.Duration
	// sent are the send times within the window, oldest first, at most
	// n of them.
	sent []time.Time
}

func newMinuteCap(perMinute float64, now func() time.Time) *minuteCap {
	c := &minuteCap{now: now, sleep: sleepCtx}
	c.resize(perMinute)
	return c
}

// capShape turns a per-minute rate into a count per window. The rate is
// held to config.MaxRateLimit, which the loader and the plan's limits
// keep to already: the cap keeps one time per turn, so no number read
// from outside may size it.
func capShape(perMinute float64) (int, time.Duration) {
	switch {
	case !(perMinute <= config.MaxRateLimit): // NaN too
		return config.MaxRateLimit, time.Minute + limitMargin
	case perMinute >= 1:
		return int(math.Floor(perMinute)), time.Minute + limitMargin
	case perMinute > 0:
		return 1, time.Duration(float64(time.Minute)/perMinute) + limitMargin
	}
	return config.MaxRateLimit, time.Minute + limitMargin
}

// resize sets a new rate and keeps the send times already spent: a
// reload that changes rate_limit, or anything else of the section,
// starts from what went out before it.
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

// free says how many turns are free now, and when the next one frees
// when none is; the lock is held.
func (c *minuteCap) free(now time.Time) (int, time.Time) {
	c.expire(now)
	if n := c.n - len(c.sent); n > 0 {
		return n, now
	}
	return 0, c.sent[0].Add(c.window)
}

// take spends a turn now if one is free, or says how long until the
// oldest send leaves the window. A turn taken is returned by giveBack
// with the time take returned, when the request was not sent after all.
func (c *minuteCap) take() (wait time.Duration, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if n, next := c.free(now); n == 0 {
		return next.Sub(now), time.Time{}
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
	c.sent = append(c.sent, time.Time{})
	copy(c.sent[i+1:], c.sent[i:])
	c.sent[i] = t
	if len(c.sent) > c.n {
		c.sent = c.sent[len(c.sent)-c.n:]
	}
}

// giveBack frees a turn taken at `at` for a request that was not sent
// (the day's budget had no call for it): the turn goes to the next
// request. A turn that left the window since, or that a resize dropped,
// is not there to give back.
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

// observe counts n requests another member of a cluster sent, as sent
// now: rate_limit holds for the members' requests together.
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
			return time.Time{}, ownLimitError(d, "own rate limit (rate_limit) would pass the deadline")
		}
		if err := c.sleep(ctx, d); err != nil {
			return time.Time{}, err
		}
	}
}

// Turn is a turn of rate_limit taken before the call it is for: the
// refresh engine takes one before it starts a refresh (Client.TakeTurn),
// so that it starts none the cap has no turn for, and hands it to the
// call (WithTurn), whose first request spends it instead of waiting.
// Release gives it back when no request spent it (the call was never
// sent: a pause, the key's plan, no free connection). A zero Turn is
// one of a client without rate_limit.
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
	if t != nil && t.c != nil && t.used.CompareAndSwap(false, true) {
		t.c.giveBack(t.at)
	}
}

// spend takes the turn for a request, once.
func (t *Turn) spend() bool { return t != nil && t.c != nil && t.used.CompareAndSwap(false, true) }

// turnKey carries a Turn in a request's context (WithTurn).
type turnKey struct{}

// WithTurn hands a turn taken before the call to its first request;
// other requests of the call (a retry, a redirect hop) take turns of
// their own.
func WithTurn(ctx context.Context, t *Turn) context.Context {
	return context.WithValue(ctx, turnKey{}, t)
}

// ownLimitError is the error of a request that rate_limit holds back:
// not sent, and a turn frees after wait.
func ownLimitError(wait time.Duration, msg string) *Error {
	return &Error{Code: "rate_limited", Message: msg, HeldBack: true, RetryAfter: wait}
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
		if req.Body != nil {
			req.Body.Close()
		}
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
