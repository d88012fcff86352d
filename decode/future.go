package decode

import (
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/plan"
)

// DefaultFutureTolerance is how far after now a row without a window may
// be dated and still be taken: clocks that differ by minutes, not a local
// time written as UTC.
const DefaultFutureTolerance = 10 * time.Minute

// FutureTolerance is how far after now a row of t may be dated: one row
// spacing (its window), or DefaultFutureTolerance without one.
func FutureTolerance(t *config.Tuple) time.Duration {
	if w := plan.WindowDuration(t.Window); w > 0 {
		return w
	}
	return DefaultFutureTolerance
}

// LatestAt reads the rows of a parsed answer (Parse) at now and takes,
// per field and combination of label values, the newest non-null value,
// rows ordered by their time, not their position. Rows and their time
// are found in the answer (FindRows, FindTimeKey) unless the entry pins
// them; defaultRows is where the API documents them.
//
// A row dated more than FutureTolerance after now (a zero now trusts
// every row) is left out of everything, so that nothing is planned from
// a date like 9999-12-31; Answer.Future and FutureAt report such rows.
func LatestAt(root any, t *config.Tuple, defaultRows string, now time.Time) (*Answer, error) {
	var horizon time.Time
	if !now.IsZero() {
		horizon = now.Add(FutureTolerance(t))
	}
	rows, d, err := readRows(root, t, defaultRows, horizon)
	if err != nil {
		return nil, err
	}
	d.collect(rows, t, d.labels, newRowRules(t, d.labels, d.timeKey))
	return &d.Answer, nil
}
