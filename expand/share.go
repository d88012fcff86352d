package expand

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/go-kit/log/level"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/plan"
)

// Replicas of a cluster (package cluster) share the key's plan: the
// member that owns it (Sharing.Owner) reads it at the daily refresh and
// sends what it read to the others (Sharing.Send), which put it in force
// and keep it as if they had read it; they read it themselves at a
// reload, after a refusal, at start without a saved answer, and when the
// owner's has not come for two refreshes (a dead owner costs a day's
// late read, never none). The whole answer goes too when a member joins
// (PlanState, MergePlan: package cluster's State).

// Sharing says how a cluster shares the plan: nil Owner and Send for a
// member alone.
type Sharing struct {
	// Owner says whether this member reads the plan at the daily refresh.
	Owner func() bool
	// Send gives what this member read to the others.
	Send func([]byte)
}

// SharePlans sets how the plan is shared; call it before Maintain.
func (x *Expander) SharePlans(s Sharing) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.sharing = s
}

// sharedAnswer is the plan of the data API as members send it: the
// Cache's row (rowsOf) and when it was read.
type sharedAnswer struct {
	At  time.Time      `json:"at"`
	Row map[string]any `json:"row"`
}

// maxSharedPlan bounds a peer's answer: a plan of a few hundred
// endpoints is tens of kilobytes.
const maxSharedPlan = 4 << 20

// ownerReads says whether the daily read is this member's: true alone,
// or for the owner; a cached answer under twice Refresh old otherwise
// stands in (the owner's, sent at its read).
func (x *Expander) ownerReads(l cachedList, cached bool) bool {
	x.mu.Lock()
	owner := x.sharing.Owner
	x.mu.Unlock()
	return owner == nil || owner() || !cached || x.now().Sub(l.at) >= 2*Refresh
}

// sharePlan sends the answer read to the others.
func (x *Expander) sharePlan(rows []map[string]any, at time.Time) {
	x.mu.Lock()
	send := x.sharing.Send
	x.mu.Unlock()
	if send == nil || len(rows) != 1 {
		return
	}
	if b, err := json.Marshal(sharedAnswer{At: at, Row: rows[0]}); err == nil {
		send(b)
	}
}

// PlanState is the plan answer this member holds, for a member that
// joins; nil when it holds none.
func (x *Expander) PlanState() []byte {
	x.mu.Lock()
	src := x.source
	x.mu.Unlock()
	if src == nil || src.APIs[config.APIData] == nil {
		return nil
	}
	l, ok, _ := x.cache.lookup(src.APIs[config.APIData], plan.Path)
	if !ok || len(l.rows) != 1 {
		return nil
	}
	b, err := json.Marshal(sharedAnswer{At: l.at, Row: l.rows[0]})
	if err != nil {
		return nil
	}
	return b
}

// MergePlan takes a peer's plan answer: newer than the one held, it is
// kept and put in force as if this member had read it. An answer that is
// not one (too large, not a plan, dated ahead of this member's clock) is
// refused with an error, and the one held stays.
func (x *Expander) MergePlan(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	if len(b) > maxSharedPlan {
		return fmt.Errorf("a peer's plan answer of %d bytes, over %d", len(b), maxSharedPlan)
	}
	var s sharedAnswer
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a peer's plan answer: %w", err)
	}
	rows := []map[string]any{s.Row}
	out := outcomeOf(rows)
	if out.Kind == plan.Unknown {
		return errors.New("a peer's plan answer is not one the exporter writes")
	}
	if s.At.After(x.now().Add(time.Minute)) {
		return fmt.Errorf("a peer's plan answer read at %s, ahead of this member's clock", s.At.UTC().Format(time.RFC3339))
	}
	x.mu.Lock()
	src := x.source
	x.mu.Unlock()
	if src == nil || src.APIs[config.APIData] == nil {
		return nil // no data API here: nothing to put in force
	}
	a := src.APIs[config.APIData]
	l, cached, gen := x.cache.lookup(a, plan.Path)
	if cached && !s.At.After(l.at) {
		return nil // held already, or older
	}
	x.cache.put(a, plan.Path, rows, s.At, gen)
	c, release := x.clients.Candidate(a)
	defer release()
	level.Debug(x.logger).Log("msg", "the key's plan taken from a peer", "api", a.Name, "read_at", s.At.UTC().Format(time.RFC3339))
	x.putPlan(c, a, out)
	return nil
}
