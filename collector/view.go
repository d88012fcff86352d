package collector

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/decode"
	"github.com/onchain-exporter/onchain_exporter/exposition"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// This file gives the operator's page read-only copies of what the
// engines already publish for scrapes (served, apiView, tupleView, plans,
// the publication delay gauge): no engine lock, no upstream call. What a
// view does not publish, the page does not show. What only the page reads
// is kept here too: each tuple's last answers and the text of its last
// failure, noted from the door's effects (noteLocked).

// APIView is what one API's engine published last.
type APIView struct {
	Name   string
	API    *config.API      // the section in force; never written
	Client *upstream.Client // its client: limits, budget, pauses
	// Filled says every tuple has had its first refresh.
	Filled bool
	Series []SeriesView // in the configuration's order
}

// SeriesView is what the engine published of one tuple.
type SeriesView struct {
	Tuple *config.Tuple // the tuple in force; never written
	// OK: the last refresh succeeded; Attempted: one has ended;
	// InFlight: one is under way; Served: its values are on /metrics.
	OK, Attempted, InFlight, Served, Deprecated bool
	// Refused: the key's plan refuses its request, as
	// onchain_exporter_query_refused says.
	Refused      bool
	FailingSince time.Time
	Next         time.Time // when its next refresh is due
	Newest       time.Time // start of the newest row fetched
	// Spacing is the spacing of its rows, 0 when it is not scheduled by
	// rows (cache_ttl); Earliest the offset from a row's start at which
	// its rows are taken to be out, 0 until a row came.
	Spacing, Earliest time.Duration
	// Unit is what a cluster member owns: the tuples of one endpoint and
	// window (Exporter.Owner).
	Unit string
	// Answers are its last outcomes, oldest first (at most maxAnswers);
	// shared with the engine, never to be written.
	Answers []Answer
	// LastError is the text of its last failure, credentials masked by
	// upstream's rule (upstream.Client.Clean); "" once a refresh succeeds.
	LastError string
}

// View copies what the engines in force published, at now.
func (e *Exporter) View() []APIView {
	now := e.now()
	var out []APIView
	for _, c := range *e.served.Load() {
		v := c.view.Load()
		if v == nil || v.api == nil {
			continue
		}
		a := APIView{Name: c.name, API: v.api, Client: v.up, Series: make([]SeriesView, 0, len(v.tuples))}
		select {
		case <-v.filled:
			a.Filled = true
		default:
		}
		for i, st := range v.tuples {
			tv := st.view.Load()
			if tv == nil || i >= len(v.api.Tuples) {
				continue
			}
			t := v.api.Tuples[i] // the tuple st held when v was published
			a.Series = append(a.Series, SeriesView{Tuple: t, OK: tv.ok, Attempted: tv.attempted, InFlight: tv.inflight,
				Served: showValues(tv.values, tv.ok, tv.failingSince, now, v.api.MaxStaleness), Deprecated: tv.deprecated,
				FailingSince: tv.failingSince, Next: tv.next, Newest: tv.newest, Spacing: tv.w, Earliest: tv.earliest,
				Refused: hasFamily(tv.info, refusedFamily), Unit: delayKey(t), Answers: tv.answers, LastError: tv.lastError})
		}
		out = append(out, a)
	}
	return out
}

// Owner says which member of the cluster owns a unit, "" alone.
func (e *Exporter) Owner(unit string) string {
	owner, _ := e.peer.Owner(unit)
	return owner
}

// LoggedQuery is a tuple's query as the engine's log lines show it.
func LoggedQuery(t *config.Tuple) string { return redactedQuery(t.Query) }

// EndpointWindow names a publication delay: an API's endpoint and window.
type EndpointWindow struct{ API, Endpoint, Window string }

// PublicationDelays are the learned publication delays as
// onchain_exporter_publication_delay_seconds serves them.
func (e *Exporter) PublicationDelays() map[EndpointWindow]time.Duration {
	ch := make(chan prometheus.Metric, 64)
	go func() { e.m.pubDelay.Collect(ch); close(ch) }()
	out := map[EndpointWindow]time.Duration{}
	for m := range ch {
		var d dto.Metric
		if m.Write(&d) != nil || d.Gauge == nil {
			continue
		}
		var k EndpointWindow
		for _, l := range d.Label {
			switch l.GetName() {
			case "api":
				k.API = l.GetValue()
			case "endpoint":
				k.Endpoint = l.GetValue()
			case "window":
				k.Window = l.GetValue()
			}
		}
		out[k] = time.Duration(d.Gauge.GetValue() * float64(time.Second))
	}
	return out
}

// refusedFamily is the per-tuple family that says the plan refuses it.
const refusedFamily = namespace + "_query_refused"

// hasFamily says whether samples hold one of the family name.
func hasFamily(samples []exposition.Sample, name string) bool {
	for _, s := range samples {
		if s.Family() != nil && s.Family().Name() == name {
			return true
		}
	}
	return false
}

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
	HeldByRateLimit         // rate_limit had no turn for it before its deadline
	HeldByDailyBudget       // daily_budget had no call for it
)

func (l Limit) String() string { return [...]string{"", "rate_limit", "daily_budget"}[l] }

// Answer is one outcome of a tuple's refresh, as the operator's page lists
// a series' last ones.
type Answer struct {
	At time.Time // when the call was sent (by a peer: as it says)
	// Duration is from sending to the outcome here; 0 when not known (a
	// peer's call) or nothing was sent (held).
	Duration time.Duration
	Outcome  Outcome
	By       Caller
	// HeldBy is the limit that held the call back, and Wait how long
	// after At it has a turn again (AnswerHeld).
	HeldBy Limit
	Wait   time.Duration
	Code   string // the error's code, as api_errors_total counts it; "" when ok
	// Shape is where the answer held its rows and their time, as decode
	// found them (nil: no answer was read, or it held no rows); Samples
	// and Fields count the values it gave and their distinct fields;
	// Newest is its newest row.
	Shape           *decode.Shape
	Samples, Fields int
	Newest          time.Time
	// Note is what reading the answer said beside its values (fields
	// skipped, rows dated in the future), masked.
	Note string
}

// Until is when the limit that held the call back has a turn again; zero
// when none held it.
func (a *Answer) Until() time.Time {
	if a.HeldBy == NotHeld {
		return time.Time{}
	}
	return a.At.Add(a.Wait)
}

// maxAnswers is how many outcomes a tuple keeps for the page: 8 of 128
// bytes, and a shape shared while it stays the same.
const maxAnswers = 8

// noteLocked keeps what the operator's page shows of an event of st after
// the door took it (fx): the outcome of a call (here, or a peer's) in
// st.answers, and the text of its last failure in st.lastError, masked by
// the one rule (upstream.Client.Clean). It changes nothing the engine
// reads.
func (c *apiCollector) noteLocked(st *tupleState, ev event, fx effects) {
	if fx.refused != "" {
		return // a row refused: the tuple keeps what it had
	}
	now := c.clk.Now()
	var a *Answer
	said := "" // the door's line of the outcome, "msg: err"
	for _, l := range fx.logs {
		if l.err != "" {
			said = c.up.Clean(l.msg + ": " + l.err)
		}
	}
	switch ev.kind {
	case evFetched, evFailed, evHeld, evRefused:
		if ev.kind == evRefused && ev.sibling {
			st.lastError = c.up.Clean(refusedLog + ": " + ev.err.Error())
			return // no call of its own
		}
		a = &Answer{At: ev.start, Outcome: AnswerOK, By: ByThis}
		if fx.fallback {
			a.By = ByFallback
		}
		if d := ev.answer; d != nil {
			if d.HasShape {
				shape := d.Shape
				a.Shape = &shape
				if n := len(st.answers); n > 0 && st.answers[n-1].Shape != nil && *st.answers[n-1].Shape == shape {
					a.Shape = st.answers[n-1].Shape // never written
				}
			}
			a.Samples, a.Fields, a.Newest = len(d.Samples), fieldsOf(d.Samples), d.Newest
		}
		switch e := ev.err; {
		case ev.kind == evHeld || e != nil && e.HeldBack:
			a.Outcome, a.Code, a.HeldBy, a.Wait = AnswerHeld, e.Code, HeldByRateLimit, e.RetryAfter
			if ev.kind == evHeld {
				a.HeldBy = HeldByDailyBudget
			}
		case ev.kind == evRefused:
			a.Outcome, a.Code = AnswerRefused, e.Code
		case !st.OK:
			a.Outcome, a.Code = AnswerError, st.LastCode
		}
		if a.Outcome != AnswerHeld {
			a.Duration = max(now.Sub(ev.start), 0)
		}
		switch {
		case ev.kind == evHeld:
			// Nothing failed: the last error, if any, stands.
		case a.Outcome == AnswerOK:
			a.Note, st.lastError = said, ""
		case said != "":
			st.lastError = said
		case ev.err != nil:
			st.lastError = c.up.Clean(ev.err.Error())
		default:
			st.lastError = c.up.Clean("refresh failed: " + st.LastCode)
		}
	case evPeerRow:
		row := ev.row
		a = &Answer{At: row.LastAttempt, Outcome: AnswerOK, By: ByPeer, Samples: len(row.Samples),
			Fields: fieldsOf(row.Samples), Newest: row.Newest}
		if !row.OK {
			a.Outcome, a.Code = AnswerError, row.LastCode
			if row.LastCode == upstream.PlanRefused {
				a.Outcome = AnswerRefused
			}
			st.lastError = fmt.Sprintf("the refresh a peer made at %s failed: %s; the error's text is in that member's log and on its page",
				row.LastAttempt.UTC().Format(time.RFC3339), row.LastCode)
		} else {
			st.lastError = ""
		}
	case evSaved:
		if st.failed() && st.lastError == "" {
			st.lastError = fmt.Sprintf("the last refresh before this process started, at %s, failed: %s",
				st.LastAttempt.UTC().Format(time.RFC3339), st.LastCode)
		}
	}
	if a == nil {
		return
	}
	// A new slice each time: the published view keeps the old one.
	n := min(len(st.answers), maxAnswers-1)
	st.answers = append(append(make([]Answer, 0, n+1), st.answers[len(st.answers)-n:]...), *a)
}

// fieldsOf counts the distinct fields of samples.
func fieldsOf(samples []decode.Sample) int {
	seen := map[*config.Field]bool{}
	for _, s := range samples {
		seen[s.Field] = true
	}
	return len(seen)
}
