package backfill

import (
	"cmp"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
	keyplan "github.com/onchain-exporter/onchain_exporter/plan"
)

// The paging of a series' history calls: which limit to ask for, whether the
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

// paging is how one series is asked for its history.
type paging struct {
	limit int // rows asked per call; 0 sends the tuple's query as it is
	// ranged says the endpoint takes from and to: a full answer is
	// followed by the next page, older, asked by `to`.
	ranged bool
	// from and to bound the rows' own times (to: the newest row wanted).
	from, to time.Time
}

// pagingFor is the paging of a tuple's history between from and the newest
// row time wanted, rowsTo.
func pagingFor(t *config.Tuple, from, rowsTo time.Time) paging {
	p := paging{from: from, to: rowsTo}
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
func (p paging) query(t *config.Tuple, limit int, before *cursor) url.Values {
	q := t.Query().URL()
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
	w := keyplan.WindowDuration(t.Window)
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

// fromFor is where a series' history starts: from (--from), or later
// where the key's plan kp reads the series' window less far back
// (clamped). The upstream measures the depth at its own clock, a moment
// after now, so the start is the first interval of the window that
// begins a minute or more after the plan's earliest time. refused is the
// plan's refusal of the series at any depth (a metric or window it does
// not include), or when nothing before to is left to read: no call is
// made. Without a plan (not read, or an API other than data) from stands.
func fromFor(t *config.Tuple, kp *keyplan.Plan, from, to, now time.Time) (start time.Time, clamped bool, refused error) {
	if kp == nil || t.API != config.APIData {
		return from, false, nil
	}
	if r := kp.Check(t.Path, t.Window, time.Time{}, now); r != nil {
		return from, false, r
	}
	earliest, ok := kp.Earliest(t.Path, t.Window, now)
	if !ok || earliest.IsZero() || !earliest.After(from) {
		return from, false, nil
	}
	start = earliest.Add(time.Minute)
	if w := keyplan.WindowDuration(t.Window); w > 0 {
		if b := start.Truncate(w); b.Before(start) {
			start = b.Add(w)
		}
	}
	if !start.Before(to) {
		d, _ := kp.Depth(t.Path, t.Window)
		return from, false, fmt.Errorf("the key's plan (%s) reads %s at %s back to %s only, from %s: nothing before --to %s",
			kp.Name, t.Path, t.Window, d, start.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339))
	}
	return start, true, nil
}

// clampNote says why a series starts after --from.
func clampNote(t *config.Tuple, kp *keyplan.Plan, start time.Time) string {
	d, _ := kp.Depth(t.Path, t.Window)
	return fmt.Sprintf("from %s: the key's plan (%s) reads %s at %s back to %s", start.UTC().Format(time.RFC3339), kp.Name, t.Path,
		cmp.Or(t.Window, keyplan.DefaultWindow), d)
}
