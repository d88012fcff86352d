package backfill

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
)

// The plan of a series' calls: which limit to ask for, whether the
// endpoint takes from and to, and what the next page asks. Pure functions
// of the tuple and the range.

// Largest limit of the data API's paths outside the catalog (SPEC.md:
// 1 to 100000 on v1, 10000 on v2).
const (
	v1MaxLimit = 100000
	v2MaxLimit = 10000
)

// boundLayout is the upstream's time format for from and to (UTC); every
// window takes it.
const boundLayout = "20060102T150405"

// plan is how one series is asked for its history.
type plan struct {
	limit int // rows asked per call; 0 sends the tuple's query as it is
	// ranged says the endpoint takes from and to: a full answer is
	// followed by the next page, older, asked by `to`.
	ranged bool
	// from and to bound the rows' own times (to: the newest row wanted).
	from, to time.Time
}

// planFor is the plan of a tuple's history between from and the newest
// row time wanted, rowsTo.
func planFor(t *config.Tuple, from, rowsTo time.Time) plan {
	p := plan{from: from, to: rowsTo}
	switch {
	case t.API == config.APIData:
		p.ranged = true
		p.limit = v1MaxLimit
		if strings.HasPrefix(t.Path, "/v2/") {
			p.limit = v2MaxLimit
		}
		if t.Endpoint != nil && t.Endpoint.MaxLimit > 0 {
			p.limit = t.Endpoint.MaxLimit
		}
	case t.Endpoint != nil && t.Endpoint.MaxLimit > 0:
		// The Indicator API's band takes a limit, not a range: one call
		// brings the newest limit rows.
		p.limit = t.Endpoint.MaxLimit
	}
	return p
}

// query is the query of the first call, or of the next page when before
// is set: the rows older than before (a row time, or a block height for
// block windows).
func (p plan) query(t *config.Tuple, limit int, before *cursor) url.Values {
	q := make(url.Values, len(t.Query)+3)
	for k, v := range t.Query {
		q[k] = v
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	if !p.ranged {
		return q
	}
	q.Set("from", p.from.UTC().Format(boundLayout))
	q.Set("to", p.to.UTC().Format(boundLayout))
	if before != nil {
		if before.hasBlock {
			// A block height is exact where several blocks share a second.
			q.Set("to", strconv.FormatInt(int64(before.block)-1, 10))
		} else {
			q.Set("to", before.time.Add(-time.Second).UTC().Format(boundLayout))
		}
	}
	return q
}

// cursor is the oldest row of a page: the next page asks for older ones.
type cursor struct {
	time     time.Time
	block    float64
	hasBlock bool
}

// expectedRows is the number of rows a fixed window has between from and
// to, both included; -1 when it cannot be told (blocks, no window).
func expectedRows(t *config.Tuple, from, to time.Time) int {
	w := config.WindowDuration(t.Window)
	if w == 0 {
		return -1
	}
	if to.Before(from) {
		return 0
	}
	first := from.Truncate(w)
	if first.Before(from) {
		first = first.Add(w)
	}
	if to.Before(first) {
		return 0
	}
	return int(to.Sub(first)/w) + 1
}

// describeCall renders one call for --dry-run and logs: the API, the
// path and the query, without the credential (which is never in a
// tuple's query).
func describeCall(t *config.Tuple, q url.Values) string {
	return fmt.Sprintf("%s GET %s?%s", t.API, t.Path, q.Encode())
}
