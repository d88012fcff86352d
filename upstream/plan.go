package upstream

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/plan"
)

// The key's plan (package plan), as last read: the data API's client
// asks nothing the plan refuses. Such a request fails before it is sent,
// as the upstream would refuse it (Error.Refused), and spends no call.
// Without a plan every request goes out and the upstream decides.

// planHolder is the plan of one account, shared by its clients.
type planHolder struct{ p atomic.Pointer[plan.Plan] }

// SetPlan puts the key's plan in force for the client's calls (nil: no
// plan known) and reports whether it differs from the one in force.
func (u *Client) SetPlan(p *plan.Plan) bool {
	old := u.plan.p.Swap(p)
	if u.api.Name == config.APIData {
		u.m.setPlan(u.api.Name, p)
	}
	return !old.Equal(p)
}

// Plan is the key's plan in force; nil when none is known.
func (u *Client) Plan() *plan.Plan { return u.plan.p.Load() }

// planCheck is the plan's refusal of a request, nil when it allows it;
// known is false when no plan is known. The history depth is not checked:
// the engine asks recent rows only, and the backfill respects it itself.
func (u *Client) planCheck(path string, query url.Values) (r *plan.Refusal, known bool) {
	p := u.plan.p.Load()
	if p == nil || u.api.Name != config.APIData {
		return nil, false
	}
	return p.Check(path, query.Get("window"), time.Time{}, u.now()), true
}

// setPlan shows the plan in force: its name and its rate limit.
func (m *Metrics) setPlan(api string, p *plan.Plan) {
	m.planInfo.DeletePartialMatch(prometheus.Labels{"api": api})
	m.planLimit.DeletePartialMatch(prometheus.Labels{"api": api})
	if p == nil {
		return
	}
	m.planInfo.WithLabelValues(api, p.Name).Set(1)
	if p.RateLimit.Known() {
		m.planLimit.WithLabelValues(api, p.RateLimit.Window).Set(float64(p.RateLimit.Token))
	}
}

// ReadPlan reads the key's plan (plan.Path) with one call through the
// client, its call of the budget borrowed (the plan says what the budget
// is). It puts nothing in force (SetPlan does). A rejected key pauses the
// API as elsewhere.
func (u *Client) ReadPlan(ctx context.Context) plan.Outcome {
	if u.api.Name != config.APIData {
		return plan.Outcome{Kind: plan.NoEndpoint}
	}
	if until, by, ok := u.paused(true); ok {
		return plan.Outcome{Kind: plan.Unknown, Err: errors.New("calls paused until " + until.UTC().Format(time.RFC3339) + " after " + by)}
	}
	resp, e := u.send(context.WithValue(ctx, unpaced{}, true), plan.Path, nil, true)
	if e != nil {
		u.clean(e)
		return plan.Outcome{Kind: plan.Unknown, Status: e.HTTP, Err: e}
	}
	out := plan.Answer(resp.status, resp.body, nil)
	if out.Kind == plan.Rejected {
		e := u.dialect.check(resp.status, resp.header, resp.body, u.now())
		if e != nil && e.Credential {
			e.URL = resp.shown
			u.failOn(true, e)
		}
	}
	if out.Err != nil {
		out.Err = errors.New(u.Clean(out.Err.Error()))
	}
	return out
}

// Refusals receives the name of an API whose upstream refused a request
// that was sent, for the key's plan: the plan may have changed, and
// expand reads it again. Signals coalesce: one waiting per pool.
func (p *Pool) Refusals() <-chan string { return p.refusals }

// noteRefusal signals Refusals without waiting.
func (u *Client) noteRefusal() {
	if u.refusals == nil {
		return
	}
	select {
	case u.refusals <- u.api.Name:
	default:
	}
}

// RejectIfRefusedEverywhere takes a refusal for the key's, not the
// plan's, when the plan endpoint refused it too (out: 403) and no keyed
// request of the client was answered with data: it then pauses the API as
// a rejected key does and reports true.
func (u *Client) RejectIfRefusedEverywhere(out plan.Outcome) bool {
	if out.Kind != plan.Basic || out.Status != http.StatusForbidden {
		return false
	}
	u.mu.Lock()
	answered := u.answered
	u.mu.Unlock()
	if answered {
		return false
	}
	until := u.now().Add(AuthPause)
	if u.pause(true, until, "forbidden", true) {
		level.Error(u.logger).Log("msg", "the upstream refuses every call of the key, the plan endpoint included: the key is taken as rejected and the API's calls are paused",
			"until", until.UTC().Format(time.RFC3339), "credential", u.api.CredentialSource(), "hint", u.api.CredentialHint())
	}
	return true
}
