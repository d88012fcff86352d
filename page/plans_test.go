package page

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/plan"
)

// The history keeps the plans put in force when they change, says what
// changed and, for a series, whether each plan allows it.
func TestPlanHistory(t *testing.T) {
	const oi, supply = "/v1/btc/market-data/open-interest", "/v1/btc/network-data/supply"
	twoYears := plan.Duration{Years: 2}
	basic := &plan.Plan{Name: "BASIC", Paths: map[string]plan.Windows{supply: {"day": twoYears}},
		RateLimit: plan.RateLimit{Token: 10, Window: "minute"}}
	same := &plan.Plan{Name: "BASIC", Paths: map[string]plan.Windows{supply: {"day": twoYears}},
		RateLimit: plan.RateLimit{Token: 10, Window: "minute"}}
	premium := &plan.Plan{Name: "PREMIUM", Paths: map[string]plan.Windows{supply: {"day": {}, "hour": {}}, oi: {"hour": {}}},
		RateLimit: plan.RateLimit{Token: 100, Window: "minute"}}
	t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	h := NewPlanHistory()
	h.Note("data", basic, t0)
	h.Note("data", same, t0.Add(time.Hour)) // read again, the same: no change
	h.Note("data", premium, t0.Add(2*time.Hour))
	h.Note("data", nil, t0.Add(3*time.Hour))
	series := &config.Tuple{Path: oi, Window: "hour"}
	got := planChanges(h.of("data"), series, t0)
	if len(got) != 3 {
		t.Fatalf("%d changes, want 3: %+v", len(got), got)
	}
	want := []PlanChange{
		{At: t0, Plan: "BASIC", Changed: []string{"the first plan this process put in force"},
			ForSeries: "refuses it: your plan (BASIC) does not include " + oi},
		{At: t0.Add(2 * time.Hour), Plan: "PREMIUM", Changed: []string{
			"plan BASIC → PREMIUM", "rate limit 10 per minute → 100 per minute", "1 path added: " + oi,
			"windows or depths changed: " + supply + ": day (P2Y) → day, hour"}, ForSeries: "allows it"},
		{At: t0.Add(3 * time.Hour), Plan: "none", Changed: []string{"no plan in force any more (the plan endpoint did not describe the key's plan)"},
			ForSeries: "no plan: the upstream decides"},
	}
	for i, w := range want {
		g := got[i]
		if !g.At.Equal(w.At) || g.Plan != w.Plan || !slices.Equal(g.Changed, w.Changed) || g.ForSeries != w.ForSeries || g.Summary == "" {
			t.Errorf("change %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
	if got := planChanges(h.of("indicator"), nil, t0); len(got) != 0 {
		t.Errorf("an API without plans: %+v", got)
	}
	for i := range 2 * maxPlanChanges {
		h.Note("data", &plan.Plan{Name: fmt.Sprint(i)}, t0.Add(time.Duration(i)*time.Minute))
	}
	if all := h.of("data"); len(all) != maxPlanChanges || all[len(all)-1].plan.Name != fmt.Sprint(2*maxPlanChanges-1) {
		t.Errorf("the history holds %d changes, want the last %d", len(all), maxPlanChanges)
	}
}

// The page shows an API's plan history, and a series' view what each plan
// meant for it.
func TestPageShowsThePlanHistory(t *testing.T) {
	r := newRig(t, fakeapi.Options{}, func(u string) string {
		return fmt.Sprintf(`
data:
  url: %s
  token_env: T
  metrics:
    - path: /v1/btc/market-data/open-interest
      window: hour
      exchange: binance
`, u)
	})
	r.src.Plans = NewPlanHistory()
	r.src.Plans.Note("data", &plan.Plan{Name: "BASIC", Paths: map[string]plan.Windows{"/v1/btc/network-data/supply": {"day": {}}}}, time.Now())
	st := statusOf(t, r, PathJSON)
	if ph := st.APIs[0].PlanHistory; len(ph) != 1 || ph[0].Plan != "BASIC" || ph[0].ForSeries != "" {
		t.Errorf("the data API's plan history: %+v", ph)
	}
	if len(st.Series.Items[0].PlanHistory) != 0 {
		t.Errorf("a series of the whole page carries the plan history: %+v", st.Series.Items[0])
	}
	key := st.Series.Items[0].Key
	one := statusOf(t, r, PathJSON+"?api=data&key="+url.QueryEscape(key))
	if ph := one.Series.Items[0].PlanHistory; len(ph) != 1 || !strings.HasPrefix(ph[0].ForSeries, "refuses it: your plan (BASIC) does not include") {
		t.Errorf("the series' plan history: %+v", ph)
	}
	_, view := r.get(t, "/series?api=data&key="+url.QueryEscape(key))
	if !contains(view, `id="series-plans"`, "the first plan this process put in force", "refuses it: your plan (BASIC)") {
		t.Errorf("the series' view lacks its plan history")
	}
}
