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
	l := &findingList{file: c.File}
	for _, t := range a.Tuples {
		if slices.Contains(strings.Split(t.Path, "/"), All) {
			continue
		}
		if r := t.Refused(p, now); r != nil {
			key := "path"
			if r.Reason == plan.WindowNotAllowed {
				key = "window"
			}
			l.add(FindingPlan, t.Entry.KeyLine(key), join(t.Entry.Key, key), "%s; the exporter does not call it", r.Error())
		}
	}
	return l.list
}

// Refused says why the key's plan does not allow the tuple, or nil: the
// engine leaves such a tuple uncalled.
func (t *Tuple) Refused(p *plan.Plan, now time.Time) *plan.Refusal {
	if p == nil || t.API != APIData {
		return nil
	}
	return p.Check(t.Path, t.Window, time.Time{}, now)
}
