package budget

import (
	"testing"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/plan"
)

// FuzzPlanLimits derives limits from any rate limit a plan answer can
// carry: never a panic, never a limit past config.MaxRateLimit or
// config.MaxDailyBudget, never a negative one. (A plan allowing
// 1 099 511 627 776 requests a second sized rate_limit's ring of send
// times and crashed every start.) To fuzz longer than CI does:
//
//	go test -run '^$' -fuzz FuzzPlanLimits -fuzztime 1m ./budget
func FuzzPlanLimits(f *testing.F) {
	for _, w := range []string{"second", "minute", "min", "hour", "day", "week", "month", "fortnight", ""} {
		for _, n := range []int{0, 1, 15, 1000, 1 << 40, 1<<63 - 1, -5} {
			f.Add(n, w)
		}
	}
	f.Fuzz(func(t *testing.T, token int, window string) {
		perMinute, perDay := PlanLimits(plan.RateLimit{Token: token, Window: window})
		if !(perMinute >= 0 && perMinute <= config.MaxRateLimit) {
			t.Errorf("%d a %s: rate_limit %v", token, window, perMinute)
		}
		if perDay < 0 || perDay > config.MaxDailyBudget {
			t.Errorf("%d a %s: daily_budget %d", token, window, perDay)
		}
	})
}
