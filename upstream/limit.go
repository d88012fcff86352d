package upstream

import (
	"context"
	"errors"
	"math"
	"net/http"
	"sync"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
)

// limitMargin widens the window of rate_limit beyond 60 s, so that two
// requests a window apart here are not counted in one minute upstream
// after a little network jitter.
const limitMargin = 250 * time.Millisecond

// minuteCap is rate_limit as a hard cap rather than an average: it keeps
// the send times of the last n requests and lets one more go only when the
// oldest of them is a whole window old. So no window of that length,
// wherever it starts, holds more than n requests. Every request on the
// wire takes a turn (limitTransport): first tries, retries and redirect
// hops alike. The concurrency cap bounds how many go out at once; the cap
// does not spread them.
//
// A rate_limit of r per minute is n = ⌊r⌋ requests per 60 s (plus the
// margin); below 1 it is one request per 60/r seconds.
type minuteCap struct {
	now   func() time.Time // real time: the cap is the upstream's
	sleep func(context.Context, time.Duration) error

	mu     sync.Mutex
	window time.Duration
	sent   []time.Time // ring of the last n send times, oldest at next
	next   int
}

func newMinuteCap(perMinute float64) *minuteCap {
	c := &minuteCap{now: time.Now, sleep: sleepCtx}
	c.resize(perMinute)
	return c
}

// capShape turns a per-minute rate into a count per window. The rate is
// held to config.MaxRateLimit, which the loader and the plan's limits
// keep to already: the ring has one entry per turn, so no number read
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
	var kept []time.Time
	for i := range c.sent { // oldest first
		if t := c.sent[(c.next+i)%len(c.sent)]; !t.IsZero() {
			kept = append(kept, t)
		}
	}
	if len(kept) > n {
		kept = kept[len(kept)-n:]
	}
	c.sent = make([]time.Time, n)
	copy(c.sent[n-len(kept):], kept) // zero times first: free turns
	c.next, c.window = 0, window
}

// take spends a turn now if one is free, or says how long until the
// oldest send leaves the window. A turn taken is returned by giveBack
// with what take returned, when the request was not sent after all.
func (c *minuteCap) take() (wait time.Duration, slot int, was time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	oldest := c.sent[c.next]
	if wait := oldest.Add(c.window).Sub(now); !oldest.IsZero() && wait > 0 {
		return wait, 0, time.Time{}
	}
	slot, was = c.next, oldest
	c.sent[c.next] = now
	c.next = (c.next + 1) % len(c.sent)
	return 0, slot, was
}

// giveBack frees a turn taken for a request that was not sent (the day's
// budget had no call for it): its slot holds the older send time again,
// so the turn goes to the next request. A resize since (a reload) drops
// it.
func (c *minuteCap) giveBack(slot int, was time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if slot >= len(c.sent) {
		return
	}
	c.sent[slot] = was
	if (slot+1)%len(c.sent) == c.next {
		c.next = slot // the last turn taken: the next request takes it
	}
}

// observe counts n requests another member of a cluster sent, as sent
// now: rate_limit holds for the members' requests together.
func (c *minuteCap) observe(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	for range min(n, len(c.sent)) {
		c.sent[c.next] = now
		c.next = (c.next + 1) % len(c.sent)
	}
}

// wait blocks until the request may go, or fails at once when its turn
// would come after the context's deadline.
func (c *minuteCap) wait(ctx context.Context) (slot int, was time.Time, err error) {
	for {
		d, slot, was := c.take()
		if d == 0 {
			return slot, was, nil
		}
		if dl, ok := ctx.Deadline(); ok && c.now().Add(d).After(dl) {
			return 0, time.Time{}, ownLimitError(d)
		}
		if err := c.sleep(ctx, d); err != nil {
			return 0, time.Time{}, err
		}
	}
}

// ownLimitError is the error of a request that rate_limit holds back past
// its deadline.
func ownLimitError(wait time.Duration) *Error {
	return &Error{Code: "rate_limited", Message: "own rate limit (rate_limit) would pass the deadline",
		HeldBack: true, RetryAfter: wait}
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
	slot, was, err := c.wait(req.Context())
	if err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	resp, err := lt.next.RoundTrip(req)
	var e *Error
	if errors.As(err, &e) && e.HeldBack {
		c.giveBack(slot, was) // not sent (the day's budget): the turn is unused
	}
	return resp, err
}

func (lt *limitTransport) CloseIdleConnections() { closeIdle(lt.next) }
