// Package published is what the refresh engines publish for the operator's
// page (collector.Exporter.View): plain copies of the published state of
// each API and series, their last answers and the text of their last
// failure, read without an engine lock and without an upstream call.
// Package collector fills them; package page reads them; neither side
// writes what the other gave.
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
	API    *config.API      // the section in force; never written
	Client *upstream.Client // its client: limits, budget, pauses
	// Filled says every tuple has had its first refresh, or the first
	// scrape waits for them no longer.
	Filled bool
	// Fill is the fill of the tuples never asked, Wait what the due
	// tuples wait for now (zero: nothing).
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
	// Line says it in a sentence, as the log says it once a minute.
	Line string
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
	// InFlight: one is under way; Served: its values are on /metrics.
	OK, Attempted, InFlight, Served, Deprecated bool
	// Refused: the key's plan refuses its request, as
	// onchain_exporter_query_refused says.
	Refused      bool
	FailingSince time.Time
	Next         time.Time    // when its next refresh is due
	Why          schedule.Why // why then, as the policy decided it
	Newest       time.Time    // start of the newest row fetched
	// Spacing is the spacing of its rows, 0 when it is not scheduled by
	// rows (cache_ttl); Earliest the offset from a row's start at which
	// its rows are taken to be out, 0 until a row came.
	Spacing, Earliest time.Duration
	// Unit is what a cluster member owns: the tuples of one endpoint and
	// window (collector.Exporter.Owner).
	Unit string
	// Answers are its last outcomes, oldest first (at most 8);
	// shared with the engine, never to be written.
	Answers []Answer
	// LastError is the text of its last failure, credentials masked by
	// upstream's rule (upstream.Client.Clean) and made inert
	// (text.Outside); "" once a refresh succeeds.
	LastError string
	// Samples are the values served (or last served), as decoded;
	// Points the rows they came from, oldest first (nil: none yet).
	// Both shared with the engine, never to be written.
	Samples []decode.Sample
	Points  *Points
	// Due is when the row after its newest is due at the latest, as
	// onchain_exporter_row_due_timestamp_seconds says of its endpoint;
	// zero while it has none.
	Due time.Time
}

// MaxPoints is how many rows a series keeps for the page's chart.
const MaxPoints = 12

// Point is one row a series' answers carried: its time (Unix seconds)
// and the value of its first sample (the chart's series).
type Point struct {
	At    int64
	Value float64
}

// pointSize is the bytes a row takes in Points: its time in Unix seconds
// as an unsigned 32-bit number (the years 1970 to 2106) and its value's
// 64 bits, little-endian.
const pointSize = 4 + 8

// Points are a series' last rows, oldest first, pointSize bytes each in
// one buffer of just their size (none until a row comes: 12 bytes for a
// series of one row, 144 for one of MaxPoints). A buffer is never written
// once made: With makes a new one.
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

// With is p with the row (at, v) noted, p unchanged: a newer row is
// added (the oldest leaves when all MaxPoints are used), the newest one
// seen again takes the value it has now (a revised row); an older row,
// or one outside the years Points hold, is no news, and p itself is
// returned.
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

// Instant is a time as an Answer keeps it: Unix nanoseconds, 0 for none
// (schedule.Instant). Eight bytes where a time.Time takes 24: a series
// keeps eight answers.
type Instant = schedule.Instant

// Answer is one outcome of a tuple's refresh, as the operator's page lists
// a series' last ones: 80 bytes, its shape shared with the engine's other
// answers of that shape.
type Answer struct {
	At Instant // when the call was sent (by a peer: as it says)
	// Span is, for a call sent, from sending to the outcome here (0 when
	// not known: a peer's call); for one held back (AnswerHeld, HeldBy),
	// how long after At the limit that held it has a turn again (Until).
	// An answer is one or the other: one field for both.
	Span time.Duration
	Code string // the error's code, as api_errors_total counts it; "" when ok
	// Shape is where the answer held its rows and their time, as decode
	// found them (nil: no answer was read, or it held no rows); Samples
	// and Fields count the values it gave and their distinct fields;
	// Newest is its newest row.
	Shape           *decode.Shape
	Samples, Fields int32
	Newest          Instant
	// Note is what reading the answer said beside its values (fields
	// skipped, rows dated in the future), masked.
	Note    string
	Outcome Outcome
	By      Caller
	HeldBy  Limit // the limit that held the call back (AnswerHeld)
}

// Until is when the limit that held the call back has a turn again; zero
// when none held it.
func (a *Answer) Until() time.Time {
	if a.HeldBy == NotHeld {
		return time.Time{}
	}
	return a.At.Time().Add(a.Span)
}
