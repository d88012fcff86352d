package decode

import (
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
)

// Row is what one row of an answer gives a tuple, for history.
type Row struct {
	Time     time.Time
	Samples  []Sample
	Block    float64
	HasBlock bool
}

// History reads every row of a parsed answer, oldest first, each with
// the samples LatestAt would have taken from it. Rows without a time or
// a value are left out; problems are the bad values skipped.
func History(root any, t *config.Tuple, defaultRows string) ([]Row, []string, error) {
	rows, d, err := readRows(root, t, defaultRows, time.Time{})
	if err != nil {
		return nil, nil, err
	}
	out := make([]Row, 0, len(rows))
	rr := newRowRules(t, d.labels, d.timeKey)
	for i := len(rows) - 1; i >= 0; i-- { // readRows orders them newest first
		r := rows[i]
		if r.time.IsZero() {
			continue
		}
		one := &reading{}
		one.collect([]row{r}, t, d.labels, rr)
		d.Problems = append(d.Problems, one.Problems...)
		if len(one.Samples) == 0 {
			continue
		}
		h := Row{Time: r.time, Samples: one.Samples}
		if b, ok := Number(r.obj["blockheight"]); ok {
			h.Block, h.HasBlock = b, true
		}
		out = append(out, h)
	}
	return out, d.Problems, nil
}
