package collector

import (
	"fmt"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/decode"
	"github.com/onchain-exporter/onchain_exporter/internal/text"
	"github.com/onchain-exporter/onchain_exporter/published"
	"github.com/onchain-exporter/onchain_exporter/schedule"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// The operator's page reads copies of what the engines publish for
// scrapes, without an engine lock; what only the page reads (a tuple's
// last answers, last failure and rows) is noted from the door's effects
// here (noteLocked).

// View copies what the engines in force published, at now.
func (e *Exporter) View() []published.API {
	now := e.now()
	var out []published.API
	for _, c := range *e.served.Load() {
		v := c.view.Load()
		if v == nil || v.api == nil {
			continue
		}
		a := c.apiOf(v)
		a.Series = make([]published.Series, 0, len(v.tuples))
		for i, st := range v.tuples {
			if i < len(v.api.Tuples) {
				if s, ok := seriesOf(st, v.api.Tuples[i], v.api, now); ok {
					a.Series = append(a.Series, s)
				}
			}
		}
		out = append(out, a)
	}
	return out
}

// SeriesView is View of one API without its series, and the one series
// of key: a look-up.
func (e *Exporter) SeriesView(api, key string) (published.API, published.Series, bool) {
	for _, c := range *e.served.Load() {
		v := c.view.Load()
		if c.name != api || v == nil || v.api == nil {
			continue
		}
		st := v.byTuple[key]
		if st == nil {
			return published.API{}, published.Series{}, false
		}
		tv := st.view.Load()
		if tv == nil || tv.tuple == nil || tv.tuple.Key != key {
			return published.API{}, published.Series{}, false
		}
		s, ok := seriesOf(st, tv.tuple, v.api, e.now())
		return c.apiOf(v), s, ok
	}
	return published.API{}, published.Series{}, false
}

// apiOf is what an engine published of its API, without the series.
func (c *apiCollector) apiOf(v *apiView) published.API {
	a := published.API{Name: c.name, API: v.api, Client: v.up}
	select {
	case <-v.filled:
		a.Filled = true
	default:
	}
	if ev := c.engine.Load(); ev != nil {
		a.Fill, a.Wait = ev.fill, ev.wait
	}
	return a
}

// seriesOf is what a tuple published, as the page reads it; t is the
// tuple in its API's view.
func seriesOf(st *tupleState, t *config.Tuple, api *config.API, now time.Time) (published.Series, bool) {
	tv := st.view.Load()
	if tv == nil {
		return published.Series{}, false
	}
	var notes pageNotes
	var points *published.Points
	if tv.page != nil {
		notes, points = *tv.page, &tv.page.points // never written
	}
	return published.Series{Tuple: t, OK: tv.ok, Attempted: tv.attempted, InFlight: st.running.Load(),
		Served: showValues(tv.values, tv.ok, tv.failingSince.Time(), now, api.MaxStaleness), Deprecated: tv.deprecated,
		FailingSince: tv.failingSince.Time(), Next: tv.next.Time(), Why: tv.why, Newest: tv.newest.Time(), Spacing: tv.w, Earliest: tv.earliest,
		Refused: tv.refused(), Unit: delayKey(tv.tuple), Answers: notes.answers, LastError: notes.lastError,
		Samples: tv.samples, Points: points, Due: tv.due()}, true
}

// Owner says which member of the cluster owns a unit, "" alone.
func (e *Exporter) Owner(unit string) string {
	owner, _ := e.peer.Owner(unit)
	return owner
}

// PublicationDelays are the learned publication delays as
// onchain_exporter_publication_delay_seconds serves them.
func (e *Exporter) PublicationDelays() map[published.EndpointWindow]time.Duration {
	return e.m.pubDelay.All()
}

// PublicationDelay is one endpoint and window's of PublicationDelays,
// false when it has none.
func (e *Exporter) PublicationDelay(k published.EndpointWindow) (time.Duration, bool) {
	return e.m.pubDelay.Get(k)
}

// maxAnswers is how many outcomes a tuple keeps for the page.
const maxAnswers = 8

// noteLocked keeps in new notes (st.page) what the page shows of an
// event the door took: the call's outcome, the last failure's text
// (masked, and inert: a U+202E or an ESC does not act on the page), and
// the row its values come from. Nothing the engine reads changes.
func (c *apiCollector) noteLocked(st *tupleState, ev event, fx effects) {
	if fx.refused != "" {
		return // a row refused: the tuple keeps what it had
	}
	n := new(pageNotes) // a copy: the published view keeps the old notes
	if st.page != nil {
		*n = *st.page
	}
	st.page = n
	if len(st.Samples) > 0 && !st.RowTime.IsZero() {
		n.points = n.points.With(st.RowTime.Unix(), st.Samples[0].Value)
	}
	now := c.clk.Now()
	var a *published.Answer
	said := "" // the door's line of the outcome, "msg: err"
	for _, l := range fx.logs {
		if l.err != "" {
			said = c.inert(l.msg + ": " + l.err)
		}
	}
	switch ev.kind {
	case evFetched, evFailed, evHeld, evRefused:
		if ev.kind == evRefused && ev.sibling {
			n.lastError = c.inert(refusedLog + ": " + ev.err.Error())
			return // no call of its own
		}
		a = &published.Answer{At: schedule.InstantOf(ev.start), Outcome: published.AnswerOK, By: published.ByThis}
		if fx.fallback {
			a.By = published.ByFallback
		}
		if d := ev.answer; d != nil {
			if d.HasShape {
				a.Shape = c.shapeLocked(d.Shape)
			}
			a.Samples, a.Fields, a.Newest = int32(len(d.Samples)), int32(decode.Fields(d.Samples)), schedule.InstantOf(d.Newest)
		}
		switch e := ev.err; {
		case ev.kind == evHeld:
			a.Outcome, a.Code, a.HeldBy, a.Span = published.AnswerHeld, e.Code, heldBy[e.HeldBy()], e.RetryAfter
		case ev.kind == evRefused:
			a.Outcome, a.Code = published.AnswerRefused, e.Code
		case !st.OK:
			a.Outcome, a.Code = published.AnswerError, st.LastCode
		}
		if a.Outcome != published.AnswerHeld {
			a.Span = max(now.Sub(ev.start), 0)
		}
		switch {
		case ev.kind == evHeld:
			// Nothing failed: the last error, if any, stands.
		case a.Outcome == published.AnswerOK:
			a.Note, n.lastError = said, ""
		case said != "":
			n.lastError = said
		case ev.err != nil:
			n.lastError = c.inert(ev.err.Error())
		default:
			n.lastError = c.inert("refresh failed: " + st.LastCode)
		}
	case evPeerRow:
		row := ev.row
		a = &published.Answer{At: row.LastAttempt, Outcome: published.AnswerOK, By: published.ByPeer,
			Samples: int32(len(row.Samples)), Fields: int32(decode.Fields(row.Samples)), Newest: row.Newest}
		n.lastError = ""
		if !row.OK {
			a.Outcome, a.Code = published.AnswerError, row.LastCode
			if row.LastCode == upstream.PlanRefused {
				a.Outcome = published.AnswerRefused
			}
			said := row.LastCode + "; the error's text is in that member's log and on its page"
			if ev.said != "" {
				said = upstream.Cut(ev.said) // masked at the sender, and here
			}
			n.lastError = c.inert(fmt.Sprintf("the refresh a peer made at %s failed: %s", row.LastAttempt.Time().UTC().Format(time.RFC3339), said))
		}
	case evSaved:
		if st.failed() && n.lastError == "" {
			n.lastError = text.Outside(fmt.Sprintf("the last refresh before this process started, at %s, failed: %s",
				st.LastAttempt.Time().UTC().Format(time.RFC3339), st.LastCode), maxErrorText)
		}
	}
	if a == nil {
		return
	}
	// A new slice each time: the published view keeps the old one.
	k := min(len(n.answers), maxAnswers-1)
	n.answers = append(append(make([]published.Answer, 0, k+1), n.answers[len(n.answers)-k:]...), *a)
}

// maxShapes bounds the answer shapes an engine keeps one copy of: an
// upstream answering in ever new shapes is not given more.
const maxShapes = 256

// shapeLocked is shape in one copy for all the engine's answers, never
// written; past maxShapes a copy of its own.
func (c *apiCollector) shapeLocked(shape decode.Shape) *decode.Shape {
	if p, ok := c.shapes[shape]; ok {
		return p
	}
	p := &shape
	if len(c.shapes) < maxShapes {
		if c.shapes == nil {
			c.shapes = map[decode.Shape]*decode.Shape{}
		}
		c.shapes[shape] = p
	}
	return p
}

// maxErrorText is the most of a failure's text the page keeps: an
// upstream's message (upstream.MaxText) and the words around it.
const maxErrorText = 2 * upstream.MaxText

// inert is a text as the page keeps it: masked, then made inert and
// short (text.Outside).
func (c *apiCollector) inert(s string) string {
	return text.Outside(c.up.Clean(s), maxErrorText)
}
