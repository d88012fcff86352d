// Package published is what the refresh engines publish for the
// operator's page (collector.Exporter.View), read without an engine lock.
// Package collector fills it, package page reads it; neither writes what
// the other gave.
package published

import (
	"encoding/binary"
	"math"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/decode"
	"github.com/onchain-exporter/onchain_exporter/schedule"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// API is what one API's engine published last.
type API struct {
	Name   string
	API    *config.API // the section in force; never written
	Client *upstream.Client
	// Filled: every tuple had its first refresh, or scrapes wait no more.
	Filled bool
	Fill   Fill
	Wait   Wait
	Series []Series // in the configuration's order
}

// Fill is how far the tuples never asked are: while Filling, Asked of
// Total tuples have been asked once since Since; at PerMinute calls a
// minute (0: not known yet) the rest are done at about Done.
type Fill struct {
	Filling      bool
	Asked, Total int
	Since        time.Time
	PerMinute    float64
	Done         time.Time
	Line         string // as the log says it once a minute
}

// Wait is what an API's due tuples wait for: the next turn of its
// rate_limit or the next call of its daily_budget (By), at Until.
type Wait struct {
	Until time.Time
	By    Limit
}

// Series is what the engine published of one tuple.
type Series struct {
	Tuple *config.Tuple // the tuple in force; never written
	// OK: the last refresh succeeded; Attempted: one has ended;
	// InFlight: one is under way; Served: its values are on /metrics;
	// Refused: the key's plan refuses it (query_refused).
	OK, Attempted, InFlight, Served, Deprecated, Refused bool
	FailingSince                                         time.Time
	Next                                                 time.Time    // when its next refresh is due
	Why                                                  schedule.Why // why then, as the policy decided it
	Newest                                               time.Time    // start of the newest row fetched
	// Spacing is the spacing of its rows, 0 when it is not scheduled by
	// rows (cache_ttl); Earliest the offset from a row's start at which
	// its rows are taken to be out, 0 until a row came.
	Spacing, Earliest time.Duration
	// Unit is what a cluster member owns (collector.Exporter.Owner).
	Unit string
	// Answers are its last outcomes, oldest first (at most 8). LastError
	// is its last failure's text, masked and made inert; "" once a
	// refresh succeeds. Samples are the values served (or last served),
	// Points the rows they came from, oldest first. Shared with the
	// engine: never to be written.
	Answers   []Answer
	LastError string
	Samples   []decode.Sample
	Points    *Points
	// Due is when the row after its newest is due at the latest
	// (row_due_timestamp_seconds); zero while it has none.
	Due time.Time
}

// MaxPoints is how many rows a series keeps for the page's chart.
const MaxPoints = 12

// Point is one row of a series: its time (Unix seconds) and its first
// value.
type Point struct {
	At    int64
	Value float64
}

// pointSize is a row in Points: its time as a uint32 (1970 to 2106) and
// its value's 64 bits, little-endian.
const pointSize = 4 + 8

// Points are a series' last rows, oldest first, in one buffer of just
// their size; never written once made: With makes a new one.
type Points struct {
	b []byte
}

// Len is how many rows p holds.
func (p *Points) Len() int {
	if p == nil {
		return 0
	}
	return len(p.b) / pointSize
}

// row is the ith row.
func (p *Points) row(i int) Point {
	r := p.b[i*pointSize : (i+1)*pointSize]
	return Point{At: int64(binary.LittleEndian.Uint32(r)), Value: math.Float64frombits(binary.LittleEndian.Uint64(r[4:]))}
}

// Rows are the points in use, oldest first, in a new slice (nil: none).
func (p *Points) Rows() []Point {
	n := p.Len()
	if n == 0 {
		return nil
	}
	rows := make([]Point, n)
	for i := range rows {
		rows[i] = p.row(i)
	}
	return rows
}

// With is p with the row (at, v) noted: a newer row is added (the oldest
// leaves past MaxPoints), the newest one seen again takes its new value;
// an older row, or one outside the years Points hold, returns p.
func (p Points) With(at int64, v float64) Points {
	if at < 0 || at > math.MaxUint32 {
		return p
	}
	n := p.Len()
	keep := p.b
	if n > 0 {
		last := p.row(n - 1)
		switch {
		case at < last.At, at == last.At && (v == last.Value || math.IsNaN(v) && math.IsNaN(last.Value)):
			return p
		case at == last.At:
			keep = p.b[:(n-1)*pointSize] // revised: its value replaced
		case n == MaxPoints:
			keep = p.b[pointSize:] // the oldest leaves
		}
	}
	b := make([]byte, len(keep), len(keep)+pointSize)
	copy(b, keep)
	b = binary.LittleEndian.AppendUint32(b, uint32(at))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	return Points{b: b}
}

// EndpointWindow names a publication delay: an API's endpoint and window.
type EndpointWindow struct{ API, Endpoint, Window string }

// Outcome is what a refresh came to.
type Outcome uint8

// The outcomes of an Answer.
const (
	AnswerOK      Outcome = iota // values came, and are served
	AnswerError                  // the call, or its answer, failed (Code)
	AnswerRefused                // the key's plan refused the request
	AnswerHeld                   // not sent: a limit had no turn for it (HeldBy)
)

func (o Outcome) String() string { return [...]string{"ok", "error", "refused", "held"}[o] }

// Caller is the member an Answer's call was made by.
type Caller uint8

// The callers of an Answer.
const (
	ByThis     Caller = iota // this member, for itself or a unit it owns
	ByFallback               // this member, for a unit whose owner's row did not come
	ByPeer                   // another member, whose row this member took
)

func (c Caller) String() string { return [...]string{"this member", "fallback", "peer"}[c] }

// Limit is what held a call back.
type Limit uint8

// The limits that hold a call back.
const (
	NotHeld           Limit = iota
	HeldByRateLimit         // rate_limit had no turn for it
	HeldByDailyBudget       // daily_budget had no call for it
)

func (l Limit) String() string { return [...]string{"", "rate_limit", "daily_budget"}[l] }

// Instant is a time as an Answer keeps it (schedule.Instant): 8 bytes,
// not a time.Time's 24.
type Instant = schedule.Instant

// Answer is one outcome of a tuple's refresh; its shape is shared with
// the engine's other answers of that shape.
type Answer struct {
	At Instant // when the call was sent (by a peer: as it says)
	// Span is, for a call sent, from sending to the outcome (0 for a
	// peer's); for one held back, how long after At the limit has a turn
	// again (Until).
	Span time.Duration
	Code string // the error's code, as api_errors_total counts it; "" when ok
	// Shape is where the answer held its rows, as decode found them (nil:
	// none read); Samples and Fields count its values and their fields.
	Shape           *decode.Shape
	Samples, Fields int32
	Newest          Instant
	Note            string // what reading it said beside its values, masked
	Outcome         Outcome
	By              Caller
	HeldBy          Limit // the limit that held the call back (AnswerHeld)
}

// Until is when the limit that held the call back has a turn again.
func (a *Answer) Until() time.Time {
	if a.HeldBy == NotHeld {
		return time.Time{}
	}
	return a.At.Time().Add(a.Span)
}
