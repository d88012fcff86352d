package fakeapi

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Dialect is one guess at the payload shapes of the Indicator and Analyst
// Consensus APIs, whose documentation shows none. Every dialect serves the
// same numbers at the same times, so that a test can check that the
// exporter reads the same series from any of them; only the shapes differ.
type Dialect int

const (
	// DialectA is the first guess: rows under "data" with a "date", counts
	// per stance, an analyst's profile under "data".
	DialectA Dialect = iota
	// DialectB answers in other plausible shapes: bare arrays for
	// /api/equities, /api/indicators, /assets and an analyst's calls;
	// /consensus as one object with "updated_at" (with days, the days under
	// "history" with "as_of"); the pbr-band rows under "items" with a
	// "timestamp" in Unix milliseconds; /analyst-views as a bare array of
	// one row per analyst, and /calls one row per call under "calls", both
	// with "direction" and no count; the top analysts under "results"; an
	// analyst's profile as the answer itself, with "updated_at".
	DialectB
)

var dialectNames = [...]string{"a", "b"}

// Dialects lists every dialect, for tests that run against each.
var Dialects = []Dialect{DialectA, DialectB}

func (d Dialect) String() string { return enumName(dialectNames[:], "Dialect", d) }

// ParseDialect reads a dialect name, "a" or "b" in any case; "" is A.
func ParseDialect(s string) (Dialect, error) {
	return parseEnum[Dialect](dialectNames[:], s, "dialect", "a or b", true)
}

// enumName is names[v], or typ(v) for a value without a name.
func enumName[T ~int](names []string, typ string, v T) string {
	if v >= 0 && int(v) < len(names) {
		return names[v]
	}
	return typ + "(" + strconv.Itoa(int(v)) + ")"
}

// parseEnum finds s, trimmed and in any case, among names; "" is the
// first with emptyFirst. The error names what and its choices.
func parseEnum[T ~int](names []string, s, what, choices string, emptyFirst bool) (T, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if i := slices.Index(names, s); i >= 0 || s == "" && emptyFirst {
		return T(max(i, 0)), nil
	}
	return 0, fmt.Errorf("unknown %s %q (%s)", what, s, choices)
}

// indicatorShape turns an Indicator answer built in dialect A into the
// server's dialect; route is "equities", "indicators" or "band".
func (s *Server) indicatorShape(route string, payload obj) any {
	if s.opts.Dialect != DialectB {
		return payload
	}
	rows := dataRows(payload)
	if route != "band" {
		return rows
	}
	items := make([]obj, 0, len(rows))
	for _, r := range rows {
		items = append(items, retimed(r, "timestamp", func(d time.Time) any { return d.UnixMilli() }))
	}
	equity, _ := payload.get("equity")
	return obj{{"equity", equity}, {"items", items}}
}

// consensusShape turns an Analyst Consensus answer built in dialect A into
// the server's dialect.
func (s *Server) consensusShape(rt consensusRoute, q url.Values, payload obj) any {
	if s.opts.Dialect != DialectB {
		return payload
	}
	asset, _ := payload.get("asset")
	date, _ := payload.get("date")
	rows := dataRows(payload)
	switch rt.name {
	case "assets", "analystCalls":
		return rows
	case "top":
		return obj{{"asset", asset}, {"results", rows}}
	case "analyst":
		profile, _ := payload.get("data")
		return retimed(profile.(obj), "updated_at", rfc3339)
	case "views":
		return perItem(rows, "stance", kv{"as_of", date})
	case "calls":
		day, _ := time.Parse(time.DateOnly, date.(string))
		return obj{{"asset", asset}, {"updated_at", rfc3339(day)}, {"calls", perItem(rows, "direction")}}
	case "consensus":
		if q.Has("days") {
			days, _ := strconv.Atoi(q.Get("days"))
			history := make([]obj, 0, len(rows))
			for _, r := range rows {
				history = append(history, retimed(r, "as_of", func(d time.Time) any { return d.Format(time.DateOnly) }))
			}
			return obj{{"asset", asset}, {"days", days}, {"history", history}}
		}
		latest := retimed(rows[0], "updated_at", rfc3339)
		return append(obj{{"asset", asset}}, latest...)
	}
	return payload
}

func dataRows(payload obj) []obj {
	rows, _ := payload.get("data")
	list, _ := rows.([]obj)
	return list
}

// perItem turns rows of counts into one item per count: an analyst's
// handle, the row's member key as "direction", and extra.
func perItem(rows []obj, key string, extra ...kv) []obj {
	items := []obj{}
	for _, r := range rows {
		dir, _ := r.get(key)
		n, _ := r.get("count")
		count, _ := n.(int)
		for range count {
			items = append(items, append(obj{{"handle", itemHandle(len(items))}, {"direction", dir}}, extra...))
		}
	}
	return items
}

// retimed returns a copy of row whose "date" is replaced, at the end, by
// key holding the same day as at gives it.
func retimed(row obj, key string, at func(time.Time) any) obj {
	out := make(obj, 0, len(row))
	var day time.Time
	for _, m := range row {
		if m.K == "date" {
			day, _ = time.Parse(time.DateOnly, m.V.(string))
			continue
		}
		out = append(out, m)
	}
	if day.IsZero() {
		return out
	}
	return append(out, kv{key, at(day)})
}

func rfc3339(d time.Time) any { return d.UTC().Format(time.RFC3339) }

// itemHandle names the i-th analyst of a list of items: the tracked
// handles, then numbered ones when a list is longer.
func itemHandle(i int) string {
	h := analysts[i%len(analysts)]
	if n := i / len(analysts); n > 0 {
		h += "_" + strconv.Itoa(n+1)
	}
	return h
}
