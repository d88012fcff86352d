package config

import (
	"slices"
	"strings"
	"time"

	"github.com/onchain-exporter/onchain_exporter/plan"
)

// FindingPlan is the kind of a finding about a tuple the key's plan does
// not allow (CheckPlan): the exporter does not call it.
const FindingPlan = "plan"

// CheckPlan names every data-API tuple the key's plan does not allow, in
// the plan's words, once per entry key and refusal: an entry whose
// exchange: all gives forty tuples of one refused path says so once.
// A tuple whose path still holds a value to resolve (all) is not judged:
// the check after expansion judges what it became.
func (c *Config) CheckPlan(p *plan.Plan, now time.Time) []Finding {
	a := c.APIs[APIData]
	if a == nil || p == nil {
		return nil
	}
	var out []Finding
	for _, t := range a.Tuples {
		if slices.Contains(strings.Split(t.Path, "/"), All) {
			continue
		}
		r := p.Check(t.Path, t.Window, time.Time{}, now)
		if r == nil {
			continue
		}
		key, line := t.Entry.Key+".path", t.Entry.KeyLine("path")
		if r.Reason == plan.WindowNotAllowed {
			key, line = t.Entry.Key+".window", t.Entry.KeyLine("window")
		}
		f := Finding{Kind: FindingPlan, File: c.File, Line: line, Key: key, Message: r.Error() + "; the exporter does not call it"}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// Refused says why the key's plan does not allow the tuple, or nil: the
// engine leaves such a tuple uncalled.
func (t *Tuple) Refused(p *plan.Plan, now time.Time) *plan.Refusal {
	if p == nil || t.API != APIData {
		return nil
	}
	return p.Check(t.Path, t.Window, time.Time{}, now)
}
