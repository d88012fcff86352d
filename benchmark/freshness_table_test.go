package benchmark

import (
	"fmt"
	"strings"
	"time"
)

// TargetCallsPerRow is the most upstream calls per published row the
// exporter's schedule may make, in every window and provider case.
const TargetCallsPerRow = 1.2

// StalenessTarget is the most mean excess staleness the exporter's
// schedule may show: a tenth of the row spacing, and 15 min for day rows.
func StalenessTarget(window string, step time.Duration) time.Duration {
	if window == "day" {
		return 15 * time.Minute
	}
	return step / 10
}

// Misses lists the targets a run does not meet: calls per published row,
// mean excess staleness, and published rows left unserved (a target only
// while scrapes come more often than rows). slack widens the first two
// (1 holds the targets themselves).
func (f *Freshness) Misses(slack float64) []string {
	var out []string
	if r, most := f.CallsPerRow(), TargetCallsPerRow*slack; r > most {
		out = append(out, fmt.Sprintf("%d calls for %d published rows: %.2f per row, at most %.2f", f.Calls, f.Published, r, most))
	}
	if t := time.Duration(float64(StalenessTarget(f.Window, f.Step)) * slack); f.MeanExcess > t {
		out = append(out, fmt.Sprintf("mean excess staleness %s (max %s), at most %s", fmtDur(f.MeanExcess), fmtDur(f.MaxExcess), fmtDur(t)))
	}
	if f.Unserved > 0 && f.Interval < f.Step {
		out = append(out, fmt.Sprintf("%d of %d published rows never served, target 0", f.Unserved, f.Published))
	}
	return out
}

// FreshnessTable renders runs as a markdown table, one line per run; nil
// runs (that failed) are left out.
func FreshnessTable(runs []*Freshness) string {
	var b strings.Builder
	b.WriteString("| window | scrape | upstream delay | exporter | published rows | calls | calls per row | mean excess staleness | of the window | max | unserved rows | exporter's own figure |\n")
	b.WriteString("|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, f := range runs {
		if f == nil {
			continue
		}
		own := "–"
		if f.HasOwn {
			own = fmtDur(f.OwnExcess)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d | %d | %.2f | %s | %.1f %% | %s | %d | %s |\n",
			f.Window, fmtDur(f.Interval), f.Provider, f.Policy, f.Published, f.Calls, f.CallsPerRow(),
			fmtDur(f.MeanExcess), 100*float64(f.MeanExcess)/float64(f.Step), fmtDur(f.MaxExcess), f.Unserved, own)
	}
	return b.String()
}

// fmtDur writes a duration in the unit that suits it: 40.6 s, 3.5 min,
// 2.25 h.
func fmtDur(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%.1f s", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%.1f min", d.Minutes())
	}
	return fmt.Sprintf("%.2f h", d.Hours())
}

// shortDur names a round delay: 20 s, 7 min, 3 h.
func shortDur(d time.Duration) string {
	switch {
	case d >= time.Hour && d%time.Hour == 0:
		return fmt.Sprintf("%d h", d/time.Hour)
	case d >= time.Minute && d%time.Minute == 0:
		return fmt.Sprintf("%d min", d/time.Minute)
	}
	return fmt.Sprintf("%g s", d.Seconds())
}
