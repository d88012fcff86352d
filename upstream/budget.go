package upstream

import (
	"math"
	"net/http"
	"time"

	"github.com/onchain-exporter/onchain_exporter/budget"
)

// budgetTransport makes every request that reaches the network take one
// call of the API's daily budget (daily_budget, or the upstream's own
// X-Daily-Limit when lower): first tries, retries, redirect hops, listing
// and discovery calls alike. A request the budget has no call for now is
// not sent: it is held back like one rate_limit holds back, and asked
// again when the budget's pace frees a call. It sits below the rate
// limit's wait (limitTransport): a request held back for its turn never
// took a call of the budget.
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
			if req.Body != nil {
				req.Body.Close()
			}
			// One message whatever the wait: a refresh's log line is
			// written once per message, not at every held call.
			msg := "daily_budget has no call left at this pace"
			if err := b.ReserveError(); err != nil {
				// Fail closed: a call the next process could not see
				// counted is not made.
				msg = "the day's call count cannot be written to the storage directory, so the call is held back: " + err.Error()
			}
			return nil, &Error{Code: "budget_exhausted", Message: msg,
				HeldBack: true, RetryAfter: max(next.Sub(now), time.Second)}
		}
	}
	return bt.next.RoundTrip(req)
}

// unpaced marks the context of a request that borrows its call of the
// budget (budget.Budget.Borrow) instead of waiting for the pace: the read
// of the key's plan.
type unpaced struct{}

// Budget counts the API's calls of the day and holds its daily budget. It
// is the account's: a client rebuilt for the same account keeps it.
func (u *Client) Budget() *budget.Budget {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.budget
}

// observeDaily hands the upstream's own daily limit and count
// (X-Daily-Limit, X-Daily-Used) to the budget, which then applies the
// smaller of the two limits. Values that are not whole numbers in a sane
// range are ignored.
func (u *Client) observeDaily(h http.Header) {
	b := u.Budget()
	if b == nil || u.api.DailyBudget <= 0 {
		return // without daily_budget the quota is the upstream's to enforce (DAILY_LIMIT_EXCEEDED)
	}
	// Whole numbers in a sane range only (headerNumber, as the quota
	// gauges read them); observeHeaders logs the others.
	limit, _, ok := headerNumber(h, "X-Daily-Limit", 1, maxDailyCalls)
	if !ok || limit != math.Trunc(limit) {
		return
	}
	used, _, ok := headerNumber(h, "X-Daily-Used", 0, limit)
	if !ok || used != math.Trunc(used) {
		used = 0
	}
	b.ObserveUpstream(int(limit), int(used), u.now())
}

// maxDailyCalls bounds a daily limit read from a header: past it the
// value is garbage, not a plan.
const maxDailyCalls = budget.MaxDailyCalls

func (bt *budgetTransport) CloseIdleConnections() { closeIdle(bt.next) }

// ObservePeerCalls counts n requests another member of the cluster sent
// to the API against this member's rate_limit, as sent now: the limit
// holds for the members together (their daily counts are gossiped;
// budget.ObservePeer counts them against daily_budget).
func (u *Client) ObservePeerCalls(n int) {
	if c := u.rateCap(); c != nil && n > 0 {
		c.observe(n)
	}
}
