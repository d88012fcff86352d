package expand

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/go-kit/log/level"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/plan"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// The key's plan on the data API (package plan) is read at start, daily,
// at every reload and after the upstream refuses a request for it. It is
// kept and saved with the lists, but a saved one only stands in while a
// read fails, so that an edited state file sets nothing while the
// provider answers. Read, it is put in force on the API's client
// (upstream.Client.SetPlan), and OnPlanChanged hears of a change. An
// upstream without the endpoint, or refusing it, leaves no plan in force.

// planAfterRefusal is the least time between two reads that the
// upstream's refusals ask for.
const planAfterRefusal = 10 * time.Minute

// OnPlanChanged sets f to hear of every change of the plan in force,
// from the goroutine that expands.
func (x *Expander) OnPlanChanged(f func(api string)) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.planChanged = f
}

// refreshPlan reads the plan of the data API section a, or reuses one
// this run read within reuse, puts it in force and reports whether that
// changed it.
func (x *Expander) refreshPlan(ctx context.Context, a *config.API, reuse time.Duration) (plan.Outcome, bool) {
	if a == nil || a.Name != config.APIData {
		return plan.Outcome{}, false
	}
	c, release := x.clients.Candidate(a)
	defer release()
	l, cached, gen := x.cache.lookup(a, plan.Path)
	var out plan.Outcome
	switch {
	case cached && !l.saved && l.gen == gen && x.now().Sub(l.at) < reuse:
		out = outcomeOf(l.rows)
	default:
		x.mu.Lock()
		x.planReadAt = x.now()
		x.mu.Unlock()
		rctx, cancel := context.WithTimeout(upstream.WithEndpoint(ctx, plan.Path), a.Timeout)
		out = c.ReadPlan(rctx)
		cancel()
		if out.Kind == plan.Unknown && cached {
			level.Warn(x.logger).Log("msg", "the key's plan could not be read; the last one read stands", "api", a.Name,
				"age", x.now().Sub(l.at).Round(time.Second), "err", out.Err)
			out = outcomeOf(l.rows)
		} else if out.Kind != plan.Unknown {
			x.cache.put(a, plan.Path, rowsOf(out), x.now(), gen)
		}
	}
	return out, x.putPlan(c, a, out)
}

// PlanRead is the outcome of the last read of the data API key's plan.
func (x *Expander) PlanRead() plan.Outcome {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.planLast
}

// putPlan puts the plan of an outcome in force (an unknown outcome leaves
// the one in force), says what it came to when that changed, and tells
// OnPlanChanged.
func (x *Expander) putPlan(c *upstream.Client, a *config.API, out plan.Outcome) bool {
	if out.Kind == plan.Unknown && c.Plan() != nil {
		return false
	}
	changed := c.SetPlan(out.Plan)
	said := out.String()
	x.mu.Lock()
	x.planLast = out
	first := x.planSaid[a.Name] != said
	x.planSaid[a.Name] = said
	f := x.planChanged
	x.mu.Unlock()
	if first {
		l := level.Info(x.logger)
		if out.Kind != plan.Read {
			l = level.Warn(x.logger)
		}
		l.Log("msg", "the key's plan", "api", a.Name, "plan", said)
	}
	if changed && f != nil {
		f(a.Name)
	}
	return changed
}

// planAgain reads the plan again after the upstream refused a request for
// it, unless within planAfterRefusal, and reports whether the plan in
// force changed; a 403 on everything pauses the API as for a rejected key
// (upstream.Client.RejectIfRefusedEverywhere).
func (x *Expander) planAgain(ctx context.Context) bool {
	x.mu.Lock()
	src, last, out := x.source, x.planReadAt, x.planLast
	x.mu.Unlock()
	if src == nil || src.APIs[config.APIData] == nil {
		return false
	}
	a := src.APIs[config.APIData]
	changed := false
	if x.now().Sub(last) >= planAfterRefusal {
		out, changed = x.refreshPlan(ctx, a, 0)
	}
	c, release := x.clients.Candidate(a)
	defer release()
	c.RejectIfRefusedEverywhere(out)
	return changed
}

// planAnswer is an outcome as a state file keeps it: its kind, status
// and the plan (plan.Plan.MarshalJSON).
type planAnswer struct {
	Outcome string          `json:"outcome"`
	Status  int             `json:"status,omitempty"`
	Plan    json.RawMessage `json:"plan,omitempty"`
}

// The kinds of outcome a Cache keeps.
var kindNames = map[plan.Kind]string{plan.Read: "read", plan.NoEndpoint: "no_endpoint", plan.Basic: "basic", plan.Rejected: "rejected"}

// rowsOf is an outcome as one row of the Cache, the plan kept as read (a
// tree of maps would be several times its size).
func rowsOf(out plan.Outcome) []map[string]any {
	row := map[string]any{"outcome": kindNames[out.Kind]}
	if out.Status != 0 {
		row["status"] = float64(out.Status)
	}
	if out.Plan != nil {
		row["plan"] = out.Plan
	}
	return []map[string]any{row}
}

// outcomeOf reads back what rowsOf or a state file kept; anything else
// is an unknown outcome.
func outcomeOf(rows []map[string]any) plan.Outcome {
	bad := plan.Outcome{Kind: plan.Unknown}
	if len(rows) != 1 {
		return bad
	}
	if p, ok := rows[0]["plan"].(*plan.Plan); ok && p != nil && rows[0]["outcome"] == kindNames[plan.Read] {
		status, _ := rows[0]["status"].(float64)
		return plan.Outcome{Kind: plan.Read, Plan: p, Status: int(status)}
	}
	b, err := json.Marshal(rows[0])
	if err != nil {
		return bad
	}
	var a planAnswer
	if json.Unmarshal(b, &a) != nil {
		return bad
	}
	for k, name := range kindNames {
		if name != a.Outcome {
			continue
		}
		if k != plan.Read {
			return plan.Outcome{Kind: k, Status: a.Status}
		}
		p, err := plan.Parse(a.Plan)
		if err != nil {
			bad.Err = err
			return bad
		}
		return plan.Outcome{Kind: plan.Read, Plan: p, Status: a.Status}
	}
	return bad
}

// planUnread makes a plan that could not be read, with none in force, a
// list the data API's expansion failed on: Maintain retries it, and the
// expansion's state says why.
func (r *resolution) planUnread(a *config.API, out plan.Outcome) {
	if a == nil || a.Name != config.APIData || out.Kind != plan.Unknown || r.x.plans(a) != nil {
		return
	}
	key := listKey(a, plan.Path)
	r.lists[key] = listResult{err: fmt.Errorf("%s: %v", plan.Path, out.Err)}
	if !slices.Contains(r.needs[a.Name], key) {
		r.needs[a.Name] = append(r.needs[a.Name], key)
	}
}
