package expand_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/expand"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/internal/testtool"
	"github.com/onchain-exporter/onchain_exporter/plan"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// Two members of a cluster share the key's plan: each reads it at its
// start (before it joins, as main starts a member) unless it saved one;
// at the daily refresh the owner reads it and sends it, and the other puts
// it in force without a call. When the owner's answer stops coming, the other
// reads the plan itself once its own is two refreshes old. A peer's
// answer that is not a plan is refused and changes nothing.
func TestMembersShareThePlan(t *testing.T) {
	e := newEnv(t, supplyConfig, fakeapi.Options{DataKeys: map[string]fakeapi.Plan{"pro": fakeapi.PlanProfessional}})
	cfg := func() *config.Config {
		return testtool.ConfigToken(t, e.Srv.URL, supplyConfig, "pro")
	}
	member := func() (*expand.Expander, *upstream.Pool) {
		pool := upstream.NewPool(prometheus.NewRegistry(), e.Clock.Now, log.NewNopLogger())
		t.Cleanup(pool.Close)
		return expand.New(log.NewNopLogger(), expand.Options{Now: e.Clock.Now, Clients: pool}), pool
	}
	owner, ownerPool := member()
	other, otherPool := member()
	ownerAlive := true
	owner.SharePlans(expand.Sharing{Owner: func() bool { return true }, Send: func(b []byte) {
		if err := other.MergePlan(b); err != nil {
			t.Errorf("the owner's answer refused: %v", err)
		}
	}})
	other.SharePlans(expand.Sharing{Owner: func() bool { return false }, Send: func(b []byte) {
		if ownerAlive {
			_ = owner.MergePlan(b)
		}
	}})
	reads := func() int64 { return e.Fake.CallsFor(plan.Path) }
	ctx := context.Background()
	inForce := func(p *upstream.Pool) string {
		c, release := p.Candidate(cfg().APIs[config.APIData])
		defer release()
		if c.Plan() == nil {
			return ""
		}
		return c.Plan().Name
	}

	if _, err := owner.Start(ctx, cfg()); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Start(ctx, cfg()); err != nil {
		t.Fatal(err)
	}
	if n := reads(); n != 2 {
		t.Errorf("%d reads of the plan at start by two members, want one each", n)
	}
	if a, b := inForce(ownerPool), inForce(otherPool); a != "PROFESSIONAL" || b != a {
		t.Errorf("plans in force: owner %q, other %q", a, b)
	}

	e.Clock.Add(25 * time.Hour)
	for _, x := range []*expand.Expander{owner, other} {
		if err := x.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := reads(); n != 3 {
		t.Errorf("%d reads after a daily refresh of both, want the owner's one more", n)
	}

	// The owner is gone: the other reads the plan itself once what it
	// holds is two refreshes old, not before.
	ownerAlive = false
	owner.SharePlans(expand.Sharing{})
	e.Clock.Add(25 * time.Hour)
	if err := other.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if n := reads(); n != 3 {
		t.Errorf("%d reads a day after the owner went, want still 3", n)
	}
	e.Clock.Add(25 * time.Hour)
	if err := other.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if n := reads(); n != 4 {
		t.Errorf("%d reads two days after the owner went, want the other's own: 4", n)
	}

	for _, bad := range []string{`{"at":"2026-11-20T00:00:00Z","row":{"outcome":"read","plan":{"nonsense":1}}}`, `[1,2]`, `{"at":"2999-01-01T00:00:00Z","row":{"outcome":"basic"}}`} {
		if err := other.MergePlan([]byte(bad)); err == nil {
			t.Errorf("a peer's answer %s was taken", bad)
		}
	}
	if got := inForce(otherPool); got != "PROFESSIONAL" {
		t.Errorf("after bad answers the plan in force is %q", got)
	}
}
