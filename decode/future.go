package decode

import (
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/plan"
)

// DefaultFutureTolerance is how far after now a row without a window
// (a block row, a windowless answer) may be dated and still be taken:
// clocks that differ by minutes, not a local time written as UTC.
const DefaultFutureTolerance = 10 * time.Minute

// FutureTolerance is how far after now a row of t may be dated and still
// be taken as its newest: one row spacing (its window), or
// DefaultFutureTolerance without one.
func FutureTolerance(t *config.Tuple) time.Duration {
	if w := plan.WindowDuration(t.Window); w > 0 {
		return w
	}
	return DefaultFutureTolerance
}

// LatestAt reads the rows of a parsed answer (Parse), read at now, and
// takes, per field (and per combination of label fields), the newest
// non-null value. Rows are ordered by their time key, not by their
// position: the API serves them latest first, and a payload that does
// not is read just as well. Where the rows and their time are is found
// in the answer (FindRows and FindTimeKey) unless the entry pins it
// (rows:, time_key:); defaultRows is where the API keeps them by its
// documentation.
//
// A row dated more than FutureTolerance after now is not trusted (a zero
// now trusts every row). It is left out of the values, the newest row,
// the spacing and the block height, so that the newest acceptable row is
// served and nothing is planned from a date like 9999-12-31;
// Answer.Future counts such rows and FutureAt names the newest of them,
// for the caller to count as bad data (future_row) and log once. An
// answer of future rows only holds no values.
func LatestAt(root any, t *config.Tuple, defaultRows string, now time.Time) (*Answer, error) {
	var horizon time.Time
	if !now.IsZero() {
		horizon = now.Add(FutureTolerance(t))
	}
	rows, d, err := readRows(root, t, defaultRows, horizon)
	if err != nil {
		return nil, err
	}
	d.collect(rows, t, d.labels, d.timeKey)
	return &d.Answer, nil
}
