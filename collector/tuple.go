package collector

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/decode"
	"github.com/onchain-exporter/onchain_exporter/schedule"
)

// Tuple is what a tuple has learned, its last good values and what the
// schedule needs: what survives a reload, a restart (SavedTuple) or goes
// to a peer (peerRow), as a whole. Times are absolute.
type Tuple struct {
	// Samples are the last good values as decoded; the series are built
	// from them with the tuple's labels.
	Samples  []decode.Sample  `json:"samples,omitempty"`
	RowTime  schedule.Instant `json:"row_time"` // row time of the values
	Newest   schedule.Instant `json:"newest"`   // newest row seen
	Interval time.Duration    `json:"interval,omitempty"`
	Since    schedule.Instant `json:"since,omitzero"`
	// Changed is when the values of an answer without times were last
	// seen to change, estimated between two polls.
	Changed    schedule.Instant `json:"changed,omitzero"`
	Block      *float64         `json:"block,omitempty"` // block height of the newest row
	Deprecated bool             `json:"deprecated,omitempty"`
	// Weekdays are the UTC weekdays rows were seen on since Since (bit i:
	// time.Weekday i): trading days. Beside Deprecated and OK: one word.
	Weekdays uint8 `json:"weekdays,omitempty"`

	OK           bool             `json:"ok"` // the last refresh succeeded
	LastCode     string           `json:"last_code,omitempty"`
	LastSuccess  schedule.Instant `json:"last_success"`
	LastAttempt  schedule.Instant `json:"last_attempt"`
	FailingSince schedule.Instant `json:"failing_since"`
	Failures     int              `json:"failures,omitempty"`

	schedule.Poll // when the next refresh is due, and where the row is polled for
}

// SavedTuple is a tuple's entry in a state file, under the digest of the
// tuple it belongs to.
type SavedTuple struct {
	Digest string `json:"digest"`
	State  Tuple  `json:"state"`
}

// digest is a digest of what makes a tuple's request and series: a saved
// state or a peer's row applies to a tuple of the same digest only.
func digest(t *config.Tuple) string {
	b, _ := json.Marshal(struct {
		Key, Path, Window, Rows, TimeKey string
		Query                            map[string][]string
		Fields                           map[string]*config.Field
		AllNumeric, Keyed                bool
		LabelFields, Names, Values       []string
		CacheTTL                         float64
	}{t.Key, t.Path, t.Window, t.Rows(), t.TimeKey(), t.Query().URL(), t.Fields, t.AllNumeric, t.Keyed,
		t.LabelFields(), t.LabelNames(), t.LabelValues, t.CacheTTL})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12])
}

// maxFailures bounds the failures in a row taken back.
const maxFailures = 1_000_000

// admit says why a tuple's state from outside (a peer's row, a saved
// entry) or a fetched answer is not one the exporter writes for t at now,
// or nil. Its plan is the schedule's to judge.
func admit(t *config.Tuple, s *Tuple, now time.Time) error {
	for i, x := range s.Samples {
		if math.IsNaN(x.Value) || math.IsInf(x.Value, 0) {
			return fmt.Errorf("sample %d is %v, not a finite number", i, x.Value)
		}
	}
	if s.Block != nil && *s.Block < 0 {
		return fmt.Errorf("block height %v is not a block", *s.Block)
	}
	if s.Interval < 0 || s.Interval > schedule.MaxSpacing {
		return fmt.Errorf("row spacing %v is not between 0 and %v", s.Interval, schedule.MaxSpacing)
	}
	if s.Failures < 0 || s.Failures > maxFailures {
		return fmt.Errorf("failures %d is not between 0 and %d", s.Failures, maxFailures)
	}
	// A row may be up to decode.FutureTolerance ahead of now (as LatestAt
	// takes it); anything else the exporter did is past.
	rowAhead := decode.FutureTolerance(t)
	for _, tm := range []struct {
		name  string
		t     schedule.Instant
		ahead time.Duration
	}{
		{"row_time", s.RowTime, rowAhead}, {"newest", s.Newest, rowAhead},
		{"last_success", s.LastSuccess, schedule.ClockSkew}, {"last_attempt", s.LastAttempt, schedule.ClockSkew},
		{"failing_since", s.FailingSince, schedule.ClockSkew}, {"since", s.Since, rowAhead}, {"changed", s.Changed, schedule.ClockSkew},
	} {
		if err := schedule.CheckInstant(tm.name, tm.t, now, tm.ahead); err != nil {
			return err
		}
	}
	// The spacing the policy planned with, learned for some windows.
	if err := s.Poll.Check(spacing(t.Window, s)); err != nil {
		return fmt.Errorf("%w for %s rows", err, cmp.Or(t.Window, "windowless"))
	}
	if n, most := len(s.Samples), decode.MaxSamples(t); n > most {
		return fmt.Errorf("%d samples, more than the %d an answer for this tuple can give", n, most)
	}
	return nil
}

// TakeSaved reads a tuple's entry of a state file for t at now, through
// the door's checks (admit), or says why it is not taken.
func TakeSaved(raw json.RawMessage, t *config.Tuple, now time.Time) (Tuple, error) {
	var e SavedTuple
	if err := json.Unmarshal(raw, &e); err != nil {
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) {
			return Tuple{}, errors.New(decode.ShortJSONError(err))
		}
		return Tuple{}, fmt.Errorf("not a tuple's entry: %s", decode.ShortJSONError(err))
	}
	if e.Digest != digest(t) {
		return Tuple{}, ErrNotThisTuple
	}
	e.State.Failures, e.State.Polls = max(e.State.Failures, 0), max(e.State.Polls, 0)
	if err := admit(t, &e.State, now); err != nil {
		return Tuple{}, err
	}
	if err := decode.Refit(t, e.State.Samples); err != nil {
		// A family renamed since it was saved (docs/naming.md).
		return Tuple{}, fmt.Errorf("%w: %v", ErrNotThisTuple, err)
	}
	return e.State, nil
}

// ErrNotThisTuple: an entry saved for another request or series of the
// key; not worth a warning.
var ErrNotThisTuple = errors.New("saved for another request or series")

// forgetFarTimes forgets the times of s that an Instant does not hold:
// one row dated in year 10000 must not stop the whole file, the day's
// count with it, from being written.
func (s *Tuple) forgetFarTimes() {
	schedule.ForgetFar(&s.RowTime, &s.Newest, &s.LastSuccess, &s.LastAttempt, &s.FailingSince, &s.Since, &s.Changed, &s.Next)
}
