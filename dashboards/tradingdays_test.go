package dashboards

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/onchain-exporter/onchain_exporter/config"
)

// tradingDaySamples are the times of the samples a backfill writes for an
// Indicator API series (an equity's band: a row per trading day), from
// the Monday from for days days: each row at its date plus a day
// (docs/history.md, "Which time a backfilled sample carries"), none for
// Saturdays, Sundays and the holidays.
func tradingDaySamples(from time.Time, days int, holidays map[string]bool) []time.Time {
	var out []time.Time
	for d := 0; d < days; d++ {
		day := from.AddDate(0, 0, d)
		if wd := day.Weekday(); wd == time.Saturday || wd == time.Sunday || holidays[day.Format(time.DateOnly)] {
			continue
		}
		out = append(out, day.AddDate(0, 0, 1))
	}
	return out
}

// gaps counts the hourly evaluation times, from the first sample to the
// last, at which a range selector of rng finds no sample in (t-rng, t]:
// the points a panel draws empty. The left end is open, as in Prometheus
// 3 (2.x closes it), so a range that passes here passes in both.
func gaps(samples []time.Time, rng time.Duration) (empty, points int) {
	i := 0
	for t := samples[0]; !t.After(samples[len(samples)-1]); t = t.Add(time.Hour) {
		points++
		for i+1 < len(samples) && !samples[i+1].After(t) {
			i++
		}
		if t.Sub(samples[i]) >= rng { // samples[i] is the newest at or before t
			empty++
		}
	}
	return empty, points
}

// The month the check draws: 30 days from Monday 2026-11-02, with a
// holiday on Friday 2026-11-20 (a long weekend: Thursday's row, then
// Monday's).
var (
	monthStart = time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	holidays   = map[string]bool{"2026-11-20": true}
)

// TestTradingDayPanelsHaveNoWeekendGaps: a backfilled equity series has
// no sample from Friday's row (stamped Saturday 00:00) to Monday's
// (Tuesday 00:00). last_over_time(...[1d]) drew Sunday to Monday empty
// (212 of 721 hourly points over 30 days); every panel of an Indicator API
// family must draw a month of trading days, a long weekend included,
// without an empty point.
func TestTradingDayPanelsHaveNoWeekendGaps(t *testing.T) {
	tradingDays := families(config.APIIndicator)
	samples := tradingDaySamples(monthStart, 30, holidays)
	checked := 0
	for file, d := range loadDashboards(t) {
		for _, p := range allPanels(d.Panels) {
			for _, tg := range p.Targets {
				for _, problem := range tradingDayProblems(tg.Expr, tradingDays, samples) {
					checked++
					if problem != "" {
						t.Errorf("%s: panel %q: %s", file, p.Title, problem)
					}
				}
			}
		}
	}
	if checked < 5 {
		t.Errorf("only %d selectors of trading-day families found in the dashboards", checked)
	}
}

// tradingDayProblems returns, for each selector of a trading-day family in
// expr, "" when it draws samples without a gap, else what is wrong.
func tradingDayProblems(expr string, tradingDays map[string]bool, samples []time.Time) []string {
	sels, err := selectors(expr)
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	for _, s := range sels {
		switch {
		case !tradingDays[s.name]:
		case s.in == nil:
			out = append(out, s.name+" is an instant selector: backfilled trading-day rows would draw as dots")
		default:
			if empty, points := gaps(samples, s.in.Range); empty > 0 {
				out = append(out, fmt.Sprintf("%s over [%s] leaves %d of %d hourly points of a month of trading days empty (weekends, a holiday); a range of 4d bridges them",
					s.name, model.Duration(s.in.Range), empty, points))
			} else {
				out = append(out, "")
			}
		}
	}
	return out
}

// The check sees the gaps the issue measured, and none with 4d.
func TestGapsOfTradingDays(t *testing.T) {
	samples := tradingDaySamples(monthStart, 30, nil)
	if empty, points := gaps(samples, 24*time.Hour); empty == 0 {
		t.Errorf("[1d]: %d of %d points empty; want weekend gaps", empty, points)
	}
	withHoliday := tradingDaySamples(monthStart, 30, holidays)
	if empty, _ := gaps(withHoliday, 72*time.Hour); empty == 0 {
		t.Error("[3d] bridged a long weekend")
	}
	if empty, points := gaps(withHoliday, 96*time.Hour); empty != 0 {
		t.Errorf("[4d]: %d of %d points empty", empty, points)
	}
	tradingDays := map[string]bool{"onchain_equity_close_price": true}
	if p := tradingDayProblems(`onchain_equity_close_price{equity="x"}`, tradingDays, samples); len(p) != 1 || !strings.Contains(p[0], "instant") {
		t.Errorf("an instant selector: %q", p)
	}
	if p := tradingDayProblems(`onchain_supply`, tradingDays, samples); len(p) != 0 {
		t.Errorf("another family: %q", p)
	}
}
