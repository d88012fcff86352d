package check

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/onchain-exporter/onchain_exporter/budget"
	"github.com/onchain-exporter/onchain_exporter/config"
)

// printForecast writes what --config.check forecasts of the upstream
// calls per UTC day, still offline: a line per entry, a total per API
// against daily_budget and rate_limit, and a warning where the forecast
// exceeds either, with what the exporter would cut.
func printForecast(w io.Writer, cfg *config.Config) {
	r := budget.Forecast(cfg)
	fmt.Fprintf(w, "\nForecast of upstream calls per UTC day (no call made): each window's rows a day at the schedule's\n"+
		"measured %.2f calls per row, cache_ttl entries every cache_ttl, listing endpoints once a day\n"+
		"(and once more at start and on every reload). See docs/budget.md.\n", budget.Overhead)
	for _, a := range r.APIs {
		fmt.Fprintf(w, "\n%s API\n", a.API)
		writeTable(w, func(tw io.Writer) {
			fmt.Fprintln(tw, "  LINE\tENTRY\tPATH\tSERIES\tPOLLED, PER SERIES\tCALLS/DAY\tSHARE")
			for _, e := range a.Entries {
				per, pct := perValue(e), ""
				if calls := entryCalls(e); per == "" && calls != "?" {
					pct = share(e.CallsPerDay, a.CallsPerDay)
				}
				var polled []string
				for _, g := range e.Windows {
					polled = append(polled, g.String())
				}
				fmt.Fprintf(tw, "  %d\t%s\t%s\t%d%s\t%s\t%s%s\t%s\n", e.Line, e.Key, e.Path, e.Series, per,
					strings.Join(polled, "; "), entryCalls(e), per, pct)
			}
			for _, l := range a.Lists {
				fmt.Fprintf(tw, "  \tlisting\t%s\t\tonce a day\t1\t%s\n", l, share(1, a.CallsPerDay))
			}
			fmt.Fprintf(tw, "  \ttotal\t\t%d\t\t%s\n", a.Series, budget.FormatCalls(a.CallsPerDay))
		})
		for _, line := range apiNotes(a) {
			fmt.Fprintln(w, line)
		}
	}
}

// share is part of total as a whole percentage; "<1 %" for a part too
// small to show.
func share(part, total float64) string {
	switch {
	case total <= 0:
		return ""
	case part/total < 0.005:
		return "<1 %"
	}
	return fmt.Sprintf("%.0f %%", 100*part/total)
}

// perValue is how the figures of an entry with all are counted.
func perValue(e budget.EntryForecast) string {
	if len(e.PerValue) == 0 {
		return ""
	}
	return " per " + strings.Join(e.PerValue, "×") + " listed"
}

// entryCalls is an entry's calls a day, "?" for a part not known.
func entryCalls(e budget.EntryForecast) string {
	isUnknown := func(w budget.WindowForecast) bool { return w.Basis == "unknown" }
	switch {
	case !slices.ContainsFunc(e.Windows, isUnknown):
		return budget.FormatCalls(e.CallsPerDay)
	case slices.ContainsFunc(e.Windows, func(w budget.WindowForecast) bool { return !isUnknown(w) }):
		return budget.FormatCalls(e.CallsPerDay) + " + ?"
	}
	return "?"
}

// apiNotes are the lines under an API's table: what the total leaves out,
// the limits, and a warning for each limit the forecast exceeds.
func apiNotes(a budget.APIForecast) []string {
	var out, perValues []string
	for _, e := range a.Entries {
		if len(e.PerValue) > 0 {
			perValues = append(perValues, fmt.Sprintf("%s a day for each %s %s lists at start",
				budget.FormatCalls(e.CallsPerDay), strings.Join(e.PerValue, "×"), e.Key))
		}
	}
	if len(perValues) > 0 {
		out = append(out, "  the total leaves out the entries with all: add "+strings.Join(perValues, ", and "))
	}
	if a.Unknown > 0 {
		out = append(out, fmt.Sprintf("  the total leaves out %d block series: their chain's block spacing is known only once they run", a.Unknown))
	}
	least, atLeast := budget.FormatCalls(a.AtLeast()), ""
	if len(perValues) > 0 || a.Unknown > 0 {
		atLeast = "at least "
	}
	if a.DailyBudget > 0 {
		out = append(out, fmt.Sprintf("  daily_budget %d calls a day: the forecast is %s%.0f %% of it", a.DailyBudget, atLeast, 100*a.AtLeast()/float64(a.DailyBudget)))
	} else {
		out = append(out, "  daily_budget: none (set one to cap the calls a day)")
	}
	perMinute := a.AtLeast() / 1440
	if a.RateLimit > 0 {
		out = append(out, fmt.Sprintf("  rate_limit %g a minute allows %s calls a day: the forecast is %s%s a minute on average",
			a.RateLimit, budget.FormatCalls(a.RateLimitPerDay()), atLeast, perMinuteText(perMinute)))
	} else {
		out = append(out, fmt.Sprintf("  rate_limit: none (the forecast is %s%s calls a minute on average)", atLeast, perMinuteText(perMinute)))
	}
	if a.OverBudget() {
		p := a.Allotment
		msg := fmt.Sprintf("WARNING: %s: the forecast, %s%s calls a day, exceeds daily_budget %d. The exporter polls the finest windows less often first: %s; %s calls a day planned of the %s left after the %.0f %% reserve and the listing calls. Costliest: %s",
			a.API, atLeast, least, a.DailyBudget, p.Degradation(), budget.FormatCalls(p.Planned),
			budget.FormatCalls(max(p.Available, 0)), budget.Reserve*100, p.Costliest(3))
		if len(perValues) > 0 {
			msg += " (one value per all; the exporter plans again once it has listed them)"
		}
		if p.Note != "" {
			msg += ". Note: " + p.Note
		}
		msg += fmt.Sprintf(". A daily_budget of %s%.0f would cut nothing; or poll the costliest entries less (a coarser window, cache_ttl)",
			atLeast, math.Ceil((p.Natural+p.Listing)/(1-budget.Reserve)))
		out = append(out, msg)
	}
	if a.OverRateLimit() {
		out = append(out, fmt.Sprintf("WARNING: %s: the forecast, %s%s calls a minute on average, exceeds rate_limit %g: calls will be held back and series served late; raise rate_limit, set a daily_budget of at most %s (the exporter then plans within it), or poll less (cache_ttl, coarser windows)",
			a.API, atLeast, perMinuteText(perMinute), a.RateLimit, budget.FormatCalls(a.RateLimitPerDay())))
	}
	return out
}

// perMinuteText writes calls a minute with a tenth's precision, and two
// significant digits below a tenth: a few calls a day are not "0.0".
func perMinuteText(v float64) string {
	if v == 0 || v >= 0.1 {
		return fmt.Sprintf("%.1f", v)
	}
	return strconv.FormatFloat(v, 'g', 2, 64)
}
