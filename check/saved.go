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
// --storage.path (expand.ReadSaved): the plan's line and findings, the
// paths no saved list knows (errors, as with --config.check.upstream),
// and the configuration expanded from the saved lists (nil when nothing
// was saved), or why the lists show the file wrong.
func checkSaved(dir string, cfg *config.Config, logger log.Logger) (lines []string, findings []config.Finding, unlisted []*expand.UnlistedPath, resolved *config.Config, err error) {
	saved := expand.ReadSaved(dir, cfg)
	for _, w := range saved.Why {
		lines = append(lines, "not read: "+w)
	}
	if saved.Empty() {
		return lines, nil, nil, nil, nil
	}
	var p *plan.Plan
	if a := saved.Get(config.APIData, plan.Path); a != nil && cfg.APIs[config.APIData] != nil {
		out := expand.PlanOf(a)
		lines = append(lines, fmt.Sprintf("as the last run read it (%s): %s", a.At.UTC().Format("2006-01-02 15:04 MST"), out))
		p = out.Plan
	}
	listing := config.Listing{}
	for _, path := range []string{config.ListDataV1, config.ListDataV2} {
		if a := saved.Get(config.APIData, path); a != nil {
			expand.AddDiscovery(listing, a.Rows)
		}
	}
	unlisted = expand.NotInPlan(expand.Unlisted(cfg, listing), p)
	resolved, err = expand.Offline(cfg, saved.Get, p, logger)
	if err != nil {
		return lines, nil, unlisted, nil, err
	}
	if p != nil {
		findings = withoutUnlisted(resolved, unlisted).CheckPlan(p, time.Now())
	}
	return lines, findings, unlisted, resolved, nil
}
