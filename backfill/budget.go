package backfill

import (
	"fmt"
	"math"

	"github.com/go-kit/log/level"

	"github.com/onchain-exporter/onchain_exporter/budget"
	"github.com/onchain-exporter/onchain_exporter/config"
)

// The daily budget. The live exporter and a backfill beside it spend the
// calls of one account, and daily_budget caps each process on its own.
// A backfill takes what the live exporter leaves: an API's daily_budget
// less what the configuration costs the live exporter a day (its
// forecast, package budget, and the reserve the exporter keeps for
// retries, reloads and late rows). The backfill's client spends that
// share through the same budget as the exporter's (paced over the UTC
// day), and the progress file keeps the day's count, so that a run started
// again the same day spends only what is left of it.

// share is what the daily budget of one API leaves a backfill.
type share struct {
	daily, live, left int
}

// shares are the shares of the APIs of cfg that have a daily_budget.
func shares(cfg *config.Config) map[string]share {
	out := map[string]share{}
	for _, f := range budget.Forecast(cfg).APIs {
		if f.DailyBudget <= 0 || f.API == config.APIConsensus {
			continue
		}
		live := min(f.DailyBudget, int(math.Ceil(f.AtLeast()/(1-budget.Reserve))))
		out[f.API] = share{daily: f.DailyBudget, live: live, left: f.DailyBudget - live}
	}
	return out
}

// Unfunded names the APIs of cfg whose daily_budget the live exporter
// needs whole: a run calls nothing of them, not even the listings that
// resolve "all".
func Unfunded(cfg *config.Config) []string {
	var out []string
	for _, api := range config.APINames {
		if s, ok := shares(cfg)[api]; ok && s.left < 1 {
			out = append(out, api)
		}
	}
	return out
}

func (s share) String() string {
	return fmt.Sprintf("daily_budget %d, of which the live exporter needs %d a day (its forecast and reserve): %d left for backfill", s.daily, s.live, s.left)
}

// applyBudgets sets each client's daily budget to the backfill's share,
// with the count of the day the progress file kept; an API whose budget
// leaves nothing is stopped before its first call.
func (r *runner) applyBudgets() {
	now := r.o.Now()
	for api, s := range shares(r.cfg) {
		if s.left < 1 {
			r.stop(api, "daily budget: "+s.String())
			continue
		}
		b := r.pool.Client(r.cfg.APIs[api]).Budget()
		b.SetLimit(s.left, now)
		if saved, ok := r.prog.file.Budgets[api]; ok {
			if err := b.Restore(saved, now); err != nil {
				level.Debug(r.o.Logger).Log("msg", "the saved count of the daily budget is not today's", "api", api, "err", err)
			}
		}
		level.Info(r.o.Logger).Log("msg", "daily budget shared with the live exporter", "api", api, "share", s,
			"used_today", b.Used(now))
	}
}

// saveBudgets records the day's count of every budget in the progress
// file.
func (r *runner) saveBudgets() {
	now := r.o.Now()
	for api, a := range r.cfg.APIs {
		if a.DailyBudget <= 0 || api == config.APIConsensus {
			continue
		}
		if c := r.pool.Current(api); c != nil && c.Budget() != nil {
			if r.prog.file.Budgets == nil {
				r.prog.file.Budgets = map[string]budget.Saved{}
			}
			r.prog.file.Budgets[api] = c.Budget().Saved(now)
		}
	}
}
