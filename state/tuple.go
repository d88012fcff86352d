package state

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/decode"
	"github.com/onchain-exporter/onchain_exporter/schedule"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// Tuple is what a tuple has learned: its last good values and what the
// schedule needs. It is what survives a reload or a restart of a tuple,
// carried over and persisted as a whole. Times are absolute, so that it
// means the same after a restart.
type Tuple struct {
	// Samples are the last good values as decoded (scaled, labelled):
	// the series are built from them again with the tuple's labels.
	Samples  []decode.Sample `json:"samples,omitempty"`
	RowTime  time.Time       `json:"row_time"` // row time of the values
	Newest   time.Time       `json:"newest"`   // newest row seen
	Interval time.Duration   `json:"interval,omitempty"`
	// Weekdays are the UTC weekdays rows were seen on (bit i:
	// time.Weekday i) since Since, the oldest row seen: a series without
	// a window learns which days it has no rows on (trading days).
	Weekdays uint8     `json:"weekdays,omitempty"`
	Since    time.Time `json:"since,omitzero"`
	// Changed is when the values of an answer without times were last
	// seen to change, as estimated: between the last poll that did not
	// see the change and the one that did.
	Changed    time.Time `json:"changed,omitzero"`
	Block      *float64  `json:"block,omitempty"` // block height of the newest row
	Deprecated bool      `json:"deprecated,omitempty"`

	OK           bool      `json:"ok"` // the last refresh succeeded
	LastCode     string    `json:"last_code,omitempty"`
	LastSuccess  time.Time `json:"last_success"`
	LastAttempt  time.Time `json:"last_attempt"`
	FailingSince time.Time `json:"failing_since"`
	Failures     int       `json:"failures,omitempty"`

	// Plan is what the schedule keeps: when the next refresh is due and
	// where the next row is polled for.
	schedule.Plan
}

// SavedTuple is a tuple's state under the digest of the tuple it belongs
// to: a tuple whose request or series changed does not take it.
type SavedTuple struct {
	Digest string `json:"digest"`
	State  Tuple  `json:"state"`
}

// sanitize keeps counters from a file within what the schedule indexes
// with.
func (c *Tuple) sanitize() {
	c.Failures, c.Polls = max(c.Failures, 0), max(c.Polls, 0)
}

// plannedAhead is the furthest ahead a tuple's next refresh is ever
// planned (a window or two, a cache_ttl, a pause or hold of at most a
// day); a saved plan beyond it is not trusted.
func plannedAhead(t *config.Tuple) time.Duration {
	return max(2*config.WindowDuration(t.Window), time.Duration(t.CacheTTL*float64(time.Second)), upstream.MaxRestoredPause) + time.Minute
}

// Digest is a digest of what makes a tuple's request and series:
// a saved state, or a row a peer fetched, applies to a tuple of the same
// digest only.
func Digest(t *config.Tuple) string {
	b, _ := json.Marshal(struct {
		Key, Path, Window, Rows, TimeKey string
		Query                            map[string][]string
		Fields                           map[string]*config.Field
		AllNumeric, Keyed                bool
		LabelFields, Names, Values       []string
		CacheTTL                         float64
	}{t.Key, t.Path, t.Window, t.Rows, t.TimeKey, t.Query, t.Fields, t.AllNumeric, t.Keyed,
		t.LabelFields, t.LabelNames, t.LabelValues, t.CacheTTL})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12])
}

// Put keeps the state of t in the file, under the digest of t.
func (f *File) Put(t *config.Tuple, s Tuple) {
	if f.Tuples == nil {
		f.Tuples = map[string]SavedTuple{}
	}
	f.Tuples[t.Key] = SavedTuple{Digest: Digest(t), State: s}
}

// Tuple returns the saved state of a tuple of the same digest (false
// when there is none, or the file is nil). A plan further ahead of now
// than any schedule makes (a wrong clock, an altered file) is dropped:
// the tuple is due at once.
func (f *File) Tuple(t *config.Tuple, now time.Time) (Tuple, bool) {
	if f == nil {
		return Tuple{}, false
	}
	s, ok := f.Tuples[t.Key]
	if !ok || s.Digest != Digest(t) {
		return Tuple{}, false
	}
	if s.State.Next.After(now.Add(plannedAhead(t))) {
		s.State.Next = time.Time{}
	}
	return s.State, true
}
