package budget

import (
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/plan"
)

// shared marks series as a pattern's.
func shared(ss []Series) []Series {
	for i := range ss {
		ss[i].Shared = true
	}
	return ss
}

// The series of patterns are coarsened first: while they can absorb the
// cut, the series named one by one keep every row; past that, the named
// are cut too and the patterns' polled every MaxInterval.
func TestPlanCoarsensPatternsFirst(t *testing.T) {
	named := many(2, "named", "min", time.Minute)             // 3024 calls a day
	pattern := shared(many(20, "pattern", "hour", time.Hour)) // 504 calls a day
	natural := 2*Overhead*1440 + 20*Overhead*24

	// Room for the named and a little of the pattern's.
	p := NewAllotment(concat(named, pattern), 0, 3500)
	if !p.Fits || p.Factor("min", time.Minute) != 1 {
		t.Fatalf("the named series are cut while the pattern's could absorb it: %s (fits %v)", factors(p), p.Fits)
	}
	fs := p.Factors()
	if fs[named[0].Key] != 0 || fs[pattern[0].Key] <= 1 {
		t.Errorf("factors by key: named %v, pattern %v", fs[named[0].Key], fs[pattern[0].Key])
	}
	if p.Planned > p.Available || p.Planned < 0.99*p.Available {
		t.Errorf("planned %.1f of %.1f available (natural %.1f)", p.Planned, p.Available, natural)
	}

	// Less than the named series alone cost: they are cut, the pattern's
	// polled every MaxInterval.
	p = NewAllotment(concat(named, pattern), 0, 2000)
	if !p.Fits || p.Factor("min", time.Minute) <= 1 {
		t.Fatalf("the named series are not cut: %s (fits %v)", factors(p), p.Fits)
	}
	if got := p.Factors()[pattern[0].Key]; got != float64(MaxInterval/time.Hour) {
		t.Errorf("the pattern's hour series: factor %v, want %v", got, float64(MaxInterval/time.Hour))
	}
	if p.Planned > p.Available {
		t.Errorf("planned %.1f of %.1f", p.Planned, p.Available)
	}

	// Without patterns the plan is as before: one interval for all.
	q := NewAllotment(concat(named, many(20, "other", "hour", time.Hour)), 0, 3500)
	if q.Factor("min", time.Minute) <= 1 {
		t.Errorf("without patterns the finest window is cut first: %s", factors(q))
	}
}

func TestPlanLimits(t *testing.T) {
	for _, c := range []struct {
		r         plan.RateLimit
		perMinute float64
		perDay    int
	}{
		{plan.RateLimit{Token: 1000, Window: "hour"}, 0, 17280},
		{plan.RateLimit{Token: 600, Window: "minute"}, 540, 777600},
		{plan.RateLimit{Token: 2, Window: "second"}, 108, 155520},
		{plan.RateLimit{Token: 5000, Window: "day"}, 0, 4453},
		{plan.RateLimit{Token: 70000, Window: "week"}, 0, 8986},
		{plan.RateLimit{Token: 2, Window: "day"}, 0, 0},
		{plan.RateLimit{Token: 5, Window: "fortnight"}, 0, 0},
		{plan.RateLimit{}, 0, 0},
	} {
		m, d := PlanLimits(c.r)
		if m != c.perMinute || d != c.perDay {
			t.Errorf("%v: %v a minute, %d a day; want %v and %d", c.r, m, d, c.perMinute, c.perDay)
		}
		// No window of the allowance's length gets more than its share,
		// the daily budget's burst included.
		if p := c.r.Period(); d > 0 && m == 0 && burst(d)+float64(d)*float64(p)/float64(24*time.Hour) > 0.9*float64(c.r.Token) {
			t.Errorf("%v: daily_budget %d spends more than 90 %% of a window", c.r, d)
		}
	}
}

// What the file sets wins, each key apart; the plan is carried for the
// forecast in any case; the configuration loaded is not changed in place.
func TestWithPlanLimits(t *testing.T) {
	p := &plan.Plan{Name: "PROFESSIONAL", RateLimit: plan.RateLimit{Token: 1000, Window: "hour"}}
	for _, c := range []struct {
		section        string
		rate           float64
		budget         int
		fromPlan, same bool
	}{
		{"", 0, 17280, true, false},
		{"  rate_limit: 30\n", 30, 17280, true, false},
		{"  daily_budget: 500\n", 0, 500, false, false},
		{"  rate_limit: 0\n  daily_budget: 500\n", 0, 500, false, false},
	} {
		yml := "data:\n  url: http://127.0.0.1:1\n  token_env: T\n" + c.section + "  metrics:\n    - path: /v1/btc/network-data/supply\n"
		cfg, err := config.Parse("x.yml", []byte(yml), func(string) string { return "x" })
		if err != nil {
			t.Fatal(err)
		}
		before := *cfg.APIs[config.APIData]
		out := WithPlanLimits(cfg, p)
		a := out.APIs[config.APIData]
		if a.RateLimit != c.rate || a.DailyBudget != c.budget || (a.LimitsFromPlan != "") != c.fromPlan || (out == cfg) != c.same || a.Plan != p {
			t.Errorf("%q: rate_limit %v, daily_budget %d, from plan %q, same config %v", c.section, a.RateLimit, a.DailyBudget, a.LimitsFromPlan, out == cfg)
		}
		if ca := cfg.APIs[config.APIData]; ca.RateLimit != before.RateLimit || ca.DailyBudget != before.DailyBudget {
			t.Errorf("%q: the loaded configuration was changed", c.section)
		}
		if WithPlanLimits(out, p) != out {
			t.Errorf("%q: applying the plan twice changed it again", c.section)
		}
	}
	if cfg, _ := config.Parse("x.yml", []byte("data:\n  url: http://127.0.0.1:1\n  token_env: T\n  metrics:\n    - path: /v1/btc/network-data/supply\n"), func(string) string { return "x" }); WithPlanLimits(cfg, nil) != cfg {
		t.Error("without a plan the configuration must come back as it is")
	}
}

// A tuple the key's plan refuses is not called, so the forecast and the
// plan leave it out.
func TestForecastLeavesOutWhatThePlanRefuses(t *testing.T) {
	cfg, err := config.Parse("x.yml", []byte("data:\n  url: http://127.0.0.1:1\n  token_env: T\n  metrics:\n    - path: /v1/btc/market-indicator/mvrv\n      window: [day, hour]\n"), func(string) string { return "x" })
	if err != nil {
		t.Fatal(err)
	}
	before := ForecastAPI(cfg.APIs[config.APIData], nil)
	p := &plan.Plan{Name: "PROFESSIONAL", Paths: map[string]plan.Windows{"/v1/btc/market-indicator/mvrv": {"day": plan.Duration{}}}}
	after := ForecastAPI(WithPlanLimits(cfg, p).APIs[config.APIData], nil)
	if before.Series != 2 || after.Series != 1 || after.CallsPerDay >= before.CallsPerDay-20 {
		t.Errorf("series %d → %d, calls a day %.1f → %.1f", before.Series, after.Series, before.CallsPerDay, after.CallsPerDay)
	}
}
