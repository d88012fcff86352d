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

// The key's plan on the data API (package plan): what it may read, at
// which windows, how far back, and its rate limit. Only the provider's
// answer to this member's own key sets it: it is read at start, with
// every refresh (daily), at every reload (the user may have changed the
// plan: one call a reload), and when the upstream refuses a request for
// the plan (at most once in planAfterRefusal). It is kept with the lists
// in the Cache and saved with them, but an answer the last run saved is
// never believed over a read: it stands in only when the read fails (the
// upstream down at a restart), until the next read. A state file edited
// to hold another plan so sets nothing while the provider answers. The
// plan read is put in force
// on the API's client (upstream.Client.SetPlan), which then asks nothing
// the plan refuses; when it differs from the one in force, OnPlanChanged
// hears of it (the engine asks its held series again). An upstream
// without the plan endpoint (404), or one that refuses to describe the
// key's plan (403, 500), leaves no plan in force: every request goes out
// and the upstream decides, as before plans were read; that is said once.

const (
	// planAfterRefusal is the least time between two reads that the
	// upstream's refusals ask for.
	planAfterRefusal = 10 * time.Minute
)

// OnPlanChanged sets f to hear, with the API's name, of every change of
// the plan in force. It is called from the goroutine that expands: at
// start, on reload or in Maintain.
func (x *Expander) OnPlanChanged(f func(api string)) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.planChanged = f
}

// refreshPlan reads the plan of the data API section a, or reuses one
// read within reuse (one the last run saved, within Refresh), puts it in
// force and reports whether that changed the plan in force.
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

// PlanRead is the outcome of the last read of the data API key's plan:
// what --config.check says of the plan its expansion read.
func (x *Expander) PlanRead() plan.Outcome {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.planLast
}

// putPlan puts the plan of an outcome in force (none but for a plan
// read; an unknown outcome leaves the one in force), says what it came
// to when that differs from the last time, and tells OnPlanChanged.
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

// planAgain reads the plan of the data API section in force again after
// the upstream refused a request for it, unless it was read within
// planAfterRefusal; it reports whether the plan in force changed. A
// refusal while the plan endpoint refuses the key too, and nothing the
// key asked has been answered, is a 403 on everything: the key's, and
// the API is paused as for a rejected key
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

// planAnswer is an outcome as the Cache keeps it: the plan's answer (in
// the current dialect, plan.Plan.MarshalJSON), or the outcome's kind and
// status when no plan came.
type planAnswer struct {
	Outcome string          `json:"outcome"`
	Status  int             `json:"status,omitempty"`
	Plan    json.RawMessage `json:"plan,omitempty"`
}

// The kinds of outcome a Cache keeps.
var kindNames = map[plan.Kind]string{plan.Read: "read", plan.NoEndpoint: "no_endpoint", plan.Basic: "basic", plan.Rejected: "rejected"}

// rowsOf is an outcome as one row of the Cache. The plan is kept as the
// plan read: a state file writes it in the current dialect
// (plan.Plan.MarshalJSON) when it saves, and outcomeOf gives it back
// as it is. Not as a tree of maps, which for a plan of many paths is
// several times its size, nor as JSON written at every read.
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

// outcomeOf reads back what rowsOf kept, or what a state file kept of it;
// a row that is not one (a file altered, or of another version) is an
// unknown outcome.
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

// planUnread makes a plan that could not be read, with none in force,
// one of the lists the data API's expansion failed on: Maintain reads it
// again with the lists' back-off (a budget that had no call for it at
// start has one later), and the expansion's state says why.
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
