package check

import (
	"fmt"
	"time"

	"github.com/go-kit/log"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/expand"
	"github.com/onchain-exporter/onchain_exporter/plan"
)

// checkSaved is the offline check's use of what the last run kept in
// --storage.path (expand.ReadSaved): the plan's line and findings, and the
// configuration expanded from the saved lists (nil when nothing was
// saved), or why the lists show the file wrong.
func checkSaved(dir string, cfg *config.Config, logger log.Logger) (lines []string, findings []config.Finding, resolved *config.Config, err error) {
	saved := expand.ReadSaved(dir, cfg)
	for _, w := range saved.Why {
		lines = append(lines, "not read: "+w)
	}
	if saved.Empty() {
		return lines, nil, nil, nil
	}
	var p *plan.Plan
	if a := saved.Get(config.APIData, plan.Path); a != nil && cfg.APIs[config.APIData] != nil {
		out := expand.PlanOf(a)
		lines = append(lines, fmt.Sprintf("as the last run read it (%s): %s", a.At.UTC().Format("2006-01-02 15:04 MST"), out))
		p = out.Plan
	}
	resolved, err = expand.Offline(cfg, saved.Get, p, logger)
	if err != nil {
		return lines, nil, nil, err
	}
	if p != nil {
		findings = resolved.CheckPlan(p, time.Now())
	}
	return lines, findings, resolved, nil
}
