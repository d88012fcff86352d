package fakeapi

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
)

// The windowless answers' cadence is the data's own: a price-to-book band
// row per trading day (Monday to Friday), published as a data API day row;
// an asset's consensus row of a UTC day (its views, calls and score) once
// the asset's daily run ends, at a fixed time per asset between
// consensusRunEarliest and consensusRunEarliest + consensusRunSpread after
// the day closes, each day up to ±consensusRunJitter from it. No answer
// states the time: a poll before the run sees the day before.
const (
	consensusRunEarliest = time.Hour
	consensusRunSpread   = 8 * time.Hour
	consensusRunJitter   = 10 * time.Minute
)

// consensusPublished is when the consensus row of asset a for the UTC day
// d (midnight) is first served.
func consensusPublished(a consensusAsset, d time.Time) time.Time {
	h := hash64(a.key, "consensus-run")
	after := consensusRunEarliest + time.Duration(mix(h)%uint64(consensusRunSpread/time.Minute))*time.Minute
	j := unit(mix(h ^ uint64(d.Unix())))
	after += time.Duration((2*j - 1) * float64(consensusRunJitter))
	return d.Add(24 * time.Hour).Add(after.Truncate(time.Second))
}

// consensusDay is the UTC day of the newest consensus row of a served at
// now: yesterday once its run has published, else the day before.
func consensusDay(a consensusAsset, now time.Time) time.Time {
	d := day(now).AddDate(0, 0, -1)
	if consensusPublished(a, d).After(now) {
		d = d.AddDate(0, 0, -1)
	}
	return d
}

// tradingDay reports whether d has a price-to-book band row.
func tradingDay(d time.Time) bool {
	wd := d.Weekday()
	return wd != time.Saturday && wd != time.Sunday
}

// bandDay is the trading day of the newest band row served at now.
func (s *Server) bandDay(now time.Time) time.Time {
	d := s.seriesTimeline("", "day", "").latest(now)
	for !tradingDay(d) {
		d = d.AddDate(0, 0, -1)
	}
	return d
}

// timeKeys are the members that date an answer or a row, in any dialect.
var timeKeys = []string{"date", "timestamp", "updated_at", "as_of"}

// untimed is v, an Indicator or Analyst Consensus answer, without any
// member that carries a time (Options.Timeless): the same numbers in the
// same order, nothing that says when.
func untimed(v any) any {
	switch x := v.(type) {
	case obj:
		out := make(obj, 0, len(x))
		for _, m := range x {
			if !slices.Contains(timeKeys, m.K) {
				out = append(out, kv{m.K, untimed(m.V)})
			}
		}
		return out
	case []obj:
		out := make([]obj, len(x))
		for i, r := range x {
			out[i] = untimed(r).(obj)
		}
		return out
	}
	return v
}

// answer is the final shape of an Indicator or Analyst Consensus answer.
func (s *Server) answer(v any) any {
	if s.opts.Timeless {
		return untimed(v)
	}
	return v
}

// Revision is one version of a windowless answer.
type Revision struct {
	// Day is the day of the answer's newest row.
	Day time.Time
	// At is when the answer first carried that row (for the first
	// revision of a list, it may be before the list's start).
	At time.Time
	// Value is the answer's headline number in that version: the newest
	// row's close price for a price-to-book band, the score for a
	// consensus.
	Value float64
}

// Revisions lists the versions of the answer to target, a windowless
// request as the exporter sends it under the server's root
// ("/indicator/api/equities/KRX:005930/pbr-band", or
// "/consensus/consensus?asset=bitcoin"): the one served at from, then each
// one first served in (from, to], oldest first.
func (s *Server) Revisions(target string, from, to time.Time) ([]Revision, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	if id, ok := strings.CutPrefix(u.Path, "/indicator/api/equities/"); ok {
		id, _ = strings.CutSuffix(id, "/pbr-band")
		i := slices.IndexFunc(equities, func(e equity) bool { return e.id() == id })
		if i < 0 || !strings.HasSuffix(u.Path, "/pbr-band") {
			return nil, fmt.Errorf("no band at %s", target)
		}
		tl := s.seriesTimeline("", "day", "")
		value := func(d time.Time) float64 { v, _ := bandRow(equities[i], d).get("close"); return v.(float64) }
		first := s.bandDay(from)
		revs := []Revision{{Day: first, At: tl.visibleAt(first), Value: value(first)}}
		for d := first.AddDate(0, 0, 1); !d.After(s.bandDay(to)); d = d.AddDate(0, 0, 1) {
			if tradingDay(d) {
				revs = append(revs, Revision{Day: d, At: tl.visibleAt(d), Value: value(d)})
			}
		}
		return revs, nil
	}
	if u.Path != "/consensus/consensus" {
		return nil, fmt.Errorf("%s is not a windowless answer the fake models", target)
	}
	a, ok := resolveAsset(u.Query().Get("asset"))
	if !ok {
		return nil, fmt.Errorf("unknown asset in %s", target)
	}
	first := consensusDay(a, from)
	revs := []Revision{{Day: first, At: consensusPublished(a, first), Value: consensusRow(a, first).score}}
	for d := first.AddDate(0, 0, 1); !d.After(consensusDay(a, to)); d = d.AddDate(0, 0, 1) {
		revs = append(revs, Revision{Day: d, At: consensusPublished(a, d), Value: consensusRow(a, d).score})
	}
	return revs, nil
}
