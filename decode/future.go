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

// LatestAt is Latest for an answer read at now: a row dated more than
// FutureTolerance after now is not trusted. It is left out of the values,
// the newest row, the spacing and the block height, so that the newest
// acceptable row is served and nothing is planned from a date like
// 9999-12-31; Answer.Future counts such rows and FutureAt names the
// newest of them, for the caller to count as bad data (future_row) and
// log once. An answer of future rows only holds no values.
func LatestAt(root any, t *config.Tuple, defaultRows string, now time.Time) (*Answer, error) {
	rows, d, err := readRows(root, t, defaultRows, now.Add(FutureTolerance(t)))
	if err != nil {
		return nil, err
	}
	d.collect(rows, t, d.labels, d.timeKey)
	return &d.Answer, nil
}
