package page

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/onchain-exporter/onchain_exporter/decode"
	"github.com/onchain-exporter/onchain_exporter/internal/text"
	"github.com/onchain-exporter/onchain_exporter/published"
	"github.com/onchain-exporter/onchain_exporter/series"
)

// maxOutside is the most bytes of a text from outside (a path a listing
// gave, a label value a row carried, a peer's name) the page shows.
const maxOutside = 256

// outside is a text from outside as the page shows it (text.Outside).
func outside(s string) string { return text.Outside(s, maxOutside) }

// valuesOf are a series' values with their family's name, unit and HELP;
// values JSON cannot hold and families /metrics refuses are left out.
func valuesOf(samples []decode.Sample) []Value {
	out := make([]Value, 0, len(samples))
	for _, s := range samples {
		if s.Field == nil || math.IsNaN(s.Value) || math.IsInf(s.Value, 0) {
			continue
		}
		fam, err := series.Data(s.Field)
		if err != nil {
			continue
		}
		v := Value{Family: fam.Name, Value: s.Value, Unit: fam.Unit, Help: fam.Help}
		if v.Unit == "" {
			v.Unit = s.Field.Unit
		}
		for i, n := range s.ExtraNames() {
			if i < len(s.ExtraValues()) {
				if v.Labels == nil {
					v.Labels = map[string]string{}
				}
				v.Labels[n] = outside(s.ExtraValues()[i])
			}
		}
		out = append(out, v)
	}
	return out
}

// pointsOf are a series' rows, oldest first, and the row its first value
// changed at: the first row of the last run of equal values, when a row
// before it held another (zero when the points do not tell).
func pointsOf(p *published.Points) (out []Point, changed time.Time) {
	rows := p.Rows()
	out = make([]Point, 0, len(rows))
	for _, r := range rows {
		if !math.IsNaN(r.Value) && !math.IsInf(r.Value, 0) {
			out = append(out, Point{At: time.Unix(r.At, 0).UTC(), Value: r.Value})
		}
	}
	for i := len(rows) - 1; i > 0; i-- {
		if rows[i].Value != rows[i-1].Value {
			return out, time.Unix(rows[i].At, 0).UTC()
		}
	}
	return out, time.Time{}
}

// The orders of SeriesPage.Sort, besides the configuration's ("").
const (
	SortLate    = "late"    // the most overdue next row first (Series.Due)
	SortChanged = "changed" // the newest change of value first (Series.Changed)
)

// SortKeys are the orders a page of series can be asked in (?sort=).
var SortKeys = []string{SortLate, SortChanged}

// sortKey is what a series is ordered by: a time, zero last.
func sortKey(order string, s published.Series) time.Time {
	switch order {
	case SortLate:
		return s.Due
	case SortChanged:
		_, changed := pointsOf(s.Points)
		return changed
	}
	return time.Time{}
}

// candidate is a series the filter keeps, before the page is cut.
type candidate struct {
	api   int // index of its API's line
	name  string
	s     published.Series
	state string
	key   time.Time
}

// sortCandidates orders the series the filter keeps: by Due, earliest
// first, or by Changed, newest first; those without one last.
func sortCandidates(order string, cs []candidate) {
	slices.SortStableFunc(cs, func(a, b candidate) int {
		if a.key.IsZero() || b.key.IsZero() || order == SortChanged {
			return b.key.Compare(a.key) // the zero time is before any other: last
		}
		return a.key.Compare(b.key)
	})
}

// chart is a series' rows drawn as an SVG: a line, a dot a row, and the
// extremes of value and time as labels.
type chart struct {
	Width, Height int
	Line          string // the polyline's points
	Dots          []dot
	Low, High     string
	From, To      string
}

type dot struct {
	X, Y  string
	Title string
}

// The chart's size and margins, in pixels.
const (
	chartWidth, chartHeight = 640, 180
	chartLeft, chartRight   = 90, 12
	chartTop, chartBottom   = 12, 28
)

// chartOf draws points (oldest first); nil when there are none.
func chartOf(points []Point) *chart {
	if len(points) == 0 {
		return nil
	}
	c := &chart{Width: chartWidth, Height: chartHeight}
	lo, hi := points[0].Value, points[0].Value
	for _, p := range points {
		lo, hi = min(lo, p.Value), max(hi, p.Value)
	}
	t0, t1 := points[0].At, points[len(points)-1].At
	w, h := float64(chartWidth-chartLeft-chartRight), float64(chartHeight-chartTop-chartBottom)
	num := func(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) }
	var line []string
	for _, p := range points {
		x, y := chartLeft+w/2, chartTop+h/2
		if span := t1.Sub(t0); span > 0 {
			x = chartLeft + w*float64(p.At.Sub(t0))/float64(span)
		}
		if hi > lo {
			y = chartTop + h*(hi-p.Value)/(hi-lo)
		}
		line = append(line, num(x)+","+num(y))
		c.Dots = append(c.Dots, dot{X: num(x), Y: num(y), Title: p.At.Format("2006-01-02 15:04Z") + ": " + number(p.Value)})
	}
	c.Line = strings.Join(line, " ")
	c.Low, c.High = number(lo), number(hi)
	c.From, c.To = t0.Format("2006-01-02 15:04Z"), t1.Format("2006-01-02 15:04Z")
	return c
}

// number is a value as the page writes it: the shortest that reads back
// the same, as /metrics writes it.
func number(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// leadOf is a series' first value, nil when it has none.
func leadOf(vs []Value) *Value {
	if len(vs) == 0 {
		return nil
	}
	return &vs[0]
}
