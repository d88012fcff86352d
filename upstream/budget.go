package upstream

import (
	"math"
	"net/http"
	"time"

	"github.com/onchain-exporter/onchain_exporter/budget"
)

// budgetTransport makes every request that reaches the network (retries,
// redirect hops and listing calls too) take one call of the API's daily
// budget (daily_budget, or a lower X-Daily-Limit). A request the budget
// has no call for is held back, as rate_limit holds one back. It sits
// below limitTransport, so a request held for its turn took no call.
type budgetTransport struct {
	next   http.RoundTripper
	budget func() *budget.Budget // the client's; nil without a budget
	now    func() time.Time
}

func (bt *budgetTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if b := bt.budget(); b != nil {
		now := bt.now()
		take := b.Take
		if _, ok := req.Context().Value(unpaced{}).(bool); ok {
			take = b.Borrow
		}
		if ok, next := take(now); !ok {
			closeBody(req)
			// One message whatever the wait: a refresh logs once per message.
			msg := "daily_budget has no call left at this pace"
			if err := b.ReserveError(); err != nil {
				// Fail closed: no call the next process could not see counted.
				msg = "the day's call count cannot be written to the storage directory, so the call is held back: " + err.Error()
			}
			return nil, &Error{Code: "budget_exhausted", Message: msg,
				HeldBack: true, RetryAfter: max(next.Sub(now), time.Second)}
		}
	}
	return bt.next.RoundTrip(req)
}

// unpaced marks the context of a request (the read of the key's plan)
// that borrows its call of the budget instead of waiting for the pace.
type unpaced struct{}

// Budget counts the API's calls of the day and holds its daily budget; a
// client rebuilt for the same account keeps it.
func (u *Client) Budget() *budget.Budget {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.budget
}

// observeDaily hands X-Daily-Limit and X-Daily-Used to the budget, which
// applies the smaller limit. Values that are not whole numbers in a sane
// range are ignored (observeHeaders logs them).
func (u *Client) observeDaily(h http.Header) {
	b := u.Budget()
	if b == nil || u.api.DailyBudget <= 0 {
		return // without daily_budget the quota is the upstream's to enforce (DAILY_LIMIT_EXCEEDED)
	}
	limit, _, ok := headerNumber(h, "X-Daily-Limit", 1, budget.MaxDailyCalls)
	if !ok || limit != math.Trunc(limit) {
		return
	}
	used, _, ok := headerNumber(h, "X-Daily-Used", 0, limit)
	if !ok || used != math.Trunc(used) {
		used = 0
	}
	b.ObserveUpstream(int(limit), int(used), u.now())
}

func (bt *budgetTransport) CloseIdleConnections() { closeIdle(bt.next) }

// ObservePeerCalls counts n requests another cluster member sent now
// against this member's rate_limit, which holds for the members together.
func (u *Client) ObservePeerCalls(n int) {
	if c := u.rateCap(); c != nil && n > 0 {
		c.observe(n)
	}
}
