package page

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/plan"
)

// PlanHistory keeps the changes of each API's key's plan as the exporter
// put them in force (expand.Expander.OnPlanChanged), under its own lock.
type PlanHistory struct {
	mu      sync.Mutex
	changes map[string][]planSeen
}

// planSeen is one plan put in force; the plan is never written.
type planSeen struct {
	at   time.Time
	plan *plan.Plan // nil: none in force
}

// maxPlanChanges is how many changes an API keeps.
const maxPlanChanges = 16

// NewPlanHistory returns an empty history.
func NewPlanHistory() *PlanHistory { return &PlanHistory{changes: map[string][]planSeen{}} }

// Note records the plan an API's client put in force at at (nil: none);
// a plan that allows what the last one noted does is not a change.
func (h *PlanHistory) Note(api string, p *plan.Plan, at time.Time) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	seen := h.changes[api]
	if n := len(seen); n > 0 && seen[n-1].plan.Equal(p) {
		return
	}
	if len(seen) >= maxPlanChanges {
		seen = seen[len(seen)-maxPlanChanges+1:]
	}
	h.changes[api] = append(slices.Clip(seen), planSeen{at: at, plan: p})
}

// of returns an API's changes, oldest first.
func (h *PlanHistory) of(api string) []planSeen {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.changes[api]
}

// planChanges says an API's plan history; for t, what each plan meant for
// that series too.
func planChanges(seen []planSeen, t *config.Tuple, now time.Time) []PlanChange {
	out := make([]PlanChange, 0, len(seen))
	var prev *plan.Plan
	for i, s := range seen {
		c := PlanChange{At: s.at.UTC(), Plan: "none", Summary: "no plan in force: every request goes out and the upstream decides"}
		if s.plan != nil {
			c.Plan = s.plan.Name
			c.Summary = fmt.Sprintf("%d paths with windows, %d always allowed, rate limit %s",
				len(s.plan.Paths), len(s.plan.Statics), s.plan.RateLimit)
		}
		if i == 0 {
			c.Changed = []string{"the first plan this process put in force"}
		} else {
			c.Changed = planDiff(prev, s.plan)
		}
		if t != nil {
			c.ForSeries = "no plan: the upstream decides"
			if s.plan != nil {
				c.ForSeries = "allows it"
				if r := s.plan.Check(t.Path, t.Window, time.Time{}, now); r != nil {
					c.ForSeries = "refuses it: " + r.Error()
				}
			}
		}
		prev = s.plan
		out = append(out, c)
	}
	return out
}

// maxDiffLines bounds what a change says of the paths.
const maxDiffLines = 6

// planDiff says what differs from a to b.
func planDiff(a, b *plan.Plan) []string {
	switch {
	case a == nil && b == nil:
		return []string{"nothing"}
	case a == nil:
		return []string{"a plan is in force again: " + b.Name}
	case b == nil:
		return []string{"no plan in force any more (the plan endpoint did not describe the key's plan)"}
	}
	var out []string
	if a.Name != b.Name {
		out = append(out, "plan "+a.Name+" → "+b.Name)
	}
	if a.RateLimit != b.RateLimit {
		out = append(out, "rate limit "+a.RateLimit.String()+" → "+b.RateLimit.String())
	}
	var added, removed, windows []string
	for _, p := range slices.Sorted(maps.Keys(b.Paths)) {
		old, ok := a.Paths[p]
		switch {
		case !ok:
			added = append(added, p)
		case !maps.Equal(old, b.Paths[p]):
			windows = append(windows, fmt.Sprintf("%s: %s → %s", p, windowsOf(old), windowsOf(b.Paths[p])))
		}
	}
	for _, p := range slices.Sorted(maps.Keys(a.Paths)) {
		if _, ok := b.Paths[p]; !ok {
			removed = append(removed, p)
		}
	}
	// some joins the first maxDiffLines items and says how many more.
	some := func(items []string, sep string) string {
		s := strings.Join(items[:min(len(items), maxDiffLines)], sep)
		if n := len(items) - maxDiffLines; n > 0 {
			s += fmt.Sprintf(" and %d more", n)
		}
		return s
	}
	for _, l := range []struct {
		what  string
		paths []string
	}{{"added", added}, {"removed", removed}} {
		if len(l.paths) > 0 {
			out = append(out, fmt.Sprintf("%s %s: %s", plural(len(l.paths), "path"), l.what, some(l.paths, ", ")))
		}
	}
	if len(windows) > 0 {
		out = append(out, "windows or depths changed: "+some(windows, "; "))
	}
	if !slices.Equal(a.Statics, b.Statics) {
		out = append(out, fmt.Sprintf("always-allowed paths %d → %d", len(a.Statics), len(b.Statics)))
	}
	if len(out) == 0 {
		out = []string{"nothing"}
	}
	return out
}

// windowsOf says a path's windows and depths: "day (2y), hour".
func windowsOf(w plan.Windows) string {
	if len(w) == 0 {
		return "any window"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(w)) {
		if d := w[k]; !d.Unlimited() {
			k += " (" + d.String() + ")"
		}
		parts = append(parts, k)
	}
	return strings.Join(parts, ", ")
}
