package collector

import (
	"strings"
	"testing"

	"github.com/onchain-exporter/onchain_exporter/fakeapi"
)

// At start and on every reload one log line names the budget's plan, cut
// or not (docs/budget.md): at info with "nothing cut" when the file fits
// daily_budget, at warn with what is coarsened when it does not.
func TestBudgetPlanLineAtStartAndReload(t *testing.T) {
	fits := strings.Replace(supplyConfig, "  token_env: T\n", "  token_env: T\n  daily_budget: 10000\n", 1)
	e := newEnv(t, fits, fakeapi.Options{})
	logs := e.withLogs(fits)
	if n := logs.Count("level=info", "fits daily_budget", "nothing cut"); n != 1 {
		t.Errorf("%d info lines naming the plan at start, want 1:\n%s", n, logs.String())
	}
	if err := e.exp.ApplyConfig(e.parse(fits)); err != nil {
		t.Fatal(err)
	}
	if n := logs.Count("level=info", "fits daily_budget", "nothing cut"); n != 2 {
		t.Errorf("%d info lines naming the plan after a reload, want 2", n)
	}
	tight := strings.Replace(fits, "daily_budget: 10000", "daily_budget: 10", 1)
	if err := e.exp.ApplyConfig(e.parse(tight)); err != nil {
		t.Fatal(err)
	}
	if n := logs.Count("level=warn", "costs more than daily_budget"); n != 1 {
		t.Errorf("%d warn lines for a plan that cuts, want 1:\n%s", n, logs.String())
	}
}
