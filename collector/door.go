package collector

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/decode"
	"github.com/onchain-exporter/onchain_exporter/exposition"
	"github.com/onchain-exporter/onchain_exporter/internal/clock"
	"github.com/onchain-exporter/onchain_exporter/schedule"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// The one door of a tuple's state. Whatever changes a tuple (an answer
// fetched here, a refresh that failed or was held back, a row a peer
// fetched, a state file's entry, a reload, a sibling's find, a leader
// chasing, an owner awaited, a refusal by the key's plan) is an event,
// and step is the one function that takes the tuple's state and the event
// and returns the new state and its effects. It reads the configuration
// and what the key learned (door), holds no lock, does no I/O and reads
// no clock: what happens when a row arrives, from anywhere, is read here.
// The engine applies the effects in one place (applyLocked).

// eventKind is what happened to a tuple.
type eventKind uint8

const (
	// evFetched: an answer fetched here and decoded (event.answer).
	evFetched eventKind = iota
	// evFailed: a refresh that failed on the wire, or its answer
	// (event.err).
	evFailed
	// evHeld: a refresh rate_limit or the daily budget held back, never
	// sent (event.err: its limit and when it has a turn again).
	evHeld
	// evRefused: the key's plan refused the tuple's request (event.err);
	// event.sibling when another tuple of its endpoint and window was
	// refused, and this one is held without a call.
	evRefused
	// evPeerRow: a row a peer fetched (event.row, event.delay).
	evPeerRow
	// evSaved: a state file's entry (event.row), at start.
	evSaved
	// evReset: ask at once (a reload may have fixed a failure).
	evReset
	// evRebuild: a reload kept the tuple: its values are built again
	// with the labels in force; values that cannot be are dropped, and
	// the tuple asked at once.
	evRebuild
	// evSiblingFound: another series of its key found the row it waits
	// for: due at event.until, the 5 s floor kept.
	evSiblingFound
	// evLeaderChasing: due while its key's leader chases the row.
	evLeaderChasing
	// evAwaitOwner: due in a cluster, where the unit's owner fetches:
	// event.wait is this member's rank × peer timeout (0: it owns the
	// unit), event.fallingBack says the unit's owner was waited for
	// already.
	evAwaitOwner
	// evPlanChanged: the key's plan was read again and differs: a tuple
	// it held is asked again at once.
	evPlanChanged
)

// event is one thing that happened to a tuple.
type event struct {
	kind eventKind
	// start is when a refresh was sent (evFetched, evFailed, evRefused).
	start  time.Time
	answer *decode.Answer
	err    *upstream.Error
	// sibling: an evRefused learned from another tuple's call.
	sibling bool
	// row is the state a peer or a state file offers; delay what the key
	// learned at the peer. fromOwner says the peer owns the unit, or
	// this member waits for the unit's owner (a fallback's row is then
	// as good as its own).
	row       *Tuple
	delay     *schedule.Estimate
	fromOwner bool
	// byOwner: the row comes from the unit's owner itself, not from a
	// member falling back for it (the owner is heard again).
	byOwner bool
	// said: the sender's text of a peer row's failure, for the page.
	said string
	// clusterNow is now on the cluster's clock (the provider's), for a
	// peer's row: a member whose clock is behind takes the rows the
	// provider has published, dated after its own now.
	clusterNow time.Time
	until      time.Time
	// decodeFailed: an evFailed whose answer could not be read
	// (api_errors_total{code="decode"}).
	decodeFailed bool
	// wait and fallingBack: evAwaitOwner.
	wait        time.Duration
	fallingBack bool
}

// cell is what the door changes of a tuple: what it learned (Tuple,
// saved and sent whole) and what this process keeps beside it.
type cell struct {
	Tuple
	// values are the series built from Samples, ready to serve.
	values []exposition.Sample
	// logged is the last error logged, as loggedKey (each is logged
	// once); deprecatedLog says the deprecation was logged.
	logged        uint32
	deprecatedLog bool
	// fallback says its refresh is this member's own because the unit's
	// owner's row did not come (cluster.go).
	fallback bool
	// heldAt is when the last refresh was held back by the budget.
	heldAt schedule.Instant
	// awaitFrom is when the tuple came due while this member waits for
	// its unit's owner (0: it does not wait).
	awaitFrom schedule.Instant
}

// door is what step reads besides the tuple's state: the configuration in
// force, what the key learned (known) and the time. Nothing in it is
// written.
type door struct {
	tuple        *config.Tuple
	sched        *apiSchedule
	fams         *exposition.Families
	maxStaleness time.Duration
	// clean masks the credential in a message (upstream.Client.Clean).
	clean func(string) string
	known schedule.Known
	// siblingRefused: another tuple of the key said its refusal already.
	siblingRefused bool
	now            time.Time
}

// logLine is a line to log about the tuple; warn, or debug for one said
// already.
type logLine struct {
	warn     bool
	msg, err string
}

// effects are what an event does beyond the tuple's state.
type effects struct {
	// refused says why the row offered (evPeerRow, evSaved) was not
	// taken: the tuple keeps what it had. A reason for a counter, and a
	// sentence for the log.
	refused, why string
	// known is what the key learned after the event, to keep (planned).
	known   schedule.Known
	planned bool
	// replanKey: what the key's other tuples wait for changed.
	replanKey bool
	// codes are added to api_errors_total.
	codes map[string]int
	logs  []logLine
	// rowDelay, when set, is observed in row_delay_seconds; pubDelay is
	// publication_delay_seconds of the key (for windowed keys and
	// block rows).
	rowDelay, pubDelay *time.Duration
	// sent: a refresh left (not held back), counted by role (fallback
	// or owner); send: the tuple's row goes to the cluster.
	sent, fallback, send bool
	// received: a peer's row was taken.
	received bool
	// held: the refresh was held back, not sent; no refresh of the API
	// starts before holdUntil (rate_limit's next turn, daily_budget's
	// next call), by holdBy.
	held      bool
	holdUntil time.Time
	holdBy    string
	// filled: the tuple's first refresh (or a row standing for it) ended.
	filled bool
	// refuseKey: hold the key's other tuples with this refusal.
	refuseKey *upstream.Error
	// ownerHeard: the unit's owner was heard: its units are waited for
	// again.
	ownerHeard bool
	// samplesChanged: values were rebuilt from new Samples.
	samplesChanged bool
	// awaits: the tuple waits for its unit's owner (evAwaitOwner), not
	// fetched now; fallingBack: the unit's owner was waited for in vain,
	// its other tuples are not waited for again.
	awaits, fallingBack bool
}

// log adds a line, at warn the first time the tuple says it.
func (fx *effects) log(s *cell, msg, err string) {
	key := loggedKey(msg, err)
	fx.logs = append(fx.logs, logLine{warn: s.logged != key, msg: msg, err: err})
	s.logged = key
}

// loggedKey is a line's message and error as cell.logged keeps them: a
// 32-bit FNV-1a hash, 4 bytes a tuple where the text was 16 and its
// bytes (a tupleState of 288 bytes, not 320). A new line of the same
// hash as the last would be logged at debug, not warn: once in 2^32.
func loggedKey(msg, err string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(msg))
	h.Write([]byte{0})
	h.Write([]byte(err))
	return h.Sum32()
}

// step is the transition: the tuple's state s and an event in, the new
// state and its effects out. Outside input (a peer's row, a state file's
// entry, an answer) meets the same checks here (admit) and is either
// taken whole or refused whole.
func step(d door, s cell, ev event) (cell, effects) {
	fx := effects{known: d.known, codes: map[string]int{}}
	switch ev.kind {
	case evFetched:
		return fetched(d, s, ev, fx)
	case evFailed:
		if ev.decodeFailed {
			fx.codes["decode"]++
		}
		return failed(d, s, ev, fx)
	case evHeld:
		// Not sent: rate_limit has no turn, or the daily budget no
		// call, for it now. Nothing failed and nothing was tried: the
		// last good value stays served as it was (max_staleness does
		// not run), query_success says what the last call said, and
		// nothing is learned. The tuple is due again when the limit
		// has a turn; for rate_limit the engine starts no refresh of
		// the API before then (applyLocked). A wait, said by the page
		// and onchain_exporter_tuples_due, not a line per series.
		s.heldAt, fx.filled, fx.held = schedule.InstantOf(d.now), true, true
		fx.holdUntil, fx.holdBy = d.now.Add(max(ev.err.RetryAfter, 0)), ev.err.HeldBy()
		d.plan(&s, &fx, schedule.Outcome{Until: d.now.Add(max(ev.err.RetryAfter, minInterval))}) // the 5 s floor holds
		fx.logs = append(fx.logs, logLine{msg: "refresh held back by " + ev.err.HeldBy(), err: ev.err.Error()})
		return s, fx
	case evRefused:
		if ev.sibling {
			// Held without a call: its sibling's call was refused.
			s.OK, s.LastCode = false, ev.err.Code
			if s.FailingSince.IsZero() {
				s.FailingSince = schedule.InstantOf(d.now)
			}
			s.logged = loggedKey(refusedLog, ev.err.Error()) // logged once for the key
			fx.filled, fx.send = true, true
			d.plan(&s, &fx, schedule.Outcome{Err: failure(ev.err)})
			return s, fx
		}
		return failed(d, s, ev, fx)
	case evPeerRow:
		return takePeerRow(d, s, ev, fx)
	case evSaved:
		if err := admit(d.tuple, ev.row, d.now); err != nil {
			fx.refused, fx.why = "invalid", err.Error()
			return s, fx
		}
		s.Tuple = *ev.row // as the last run left it, back-off included
		d.plan(&s, &fx, schedule.Outcome{Restored: true})
		return d.rebuild(s, fx)
	case evReset, evPlanChanged:
		d.plan(&s, &fx, schedule.Outcome{Reset: true})
	case evRebuild:
		return d.rebuild(s, fx)
	case evLeaderChasing:
		d.plan(&s, &fx, schedule.Outcome{LeaderChasing: true})
	case evSiblingFound:
		d.plan(&s, &fx, schedule.Outcome{Until: ev.until})
	case evAwaitOwner:
		return awaitOwner(d, s, ev, fx)
	}
	return s, fx
}

// awaitOwner is a tuple due at now in a cluster: fetched now by the
// unit's owner, or by this member once rank × peer timeout has passed
// since it came due here (then as a fallback); till then it waits for
// the owner's row.
func awaitOwner(d door, s cell, ev event, fx effects) (cell, effects) {
	switch {
	case ev.wait <= 0:
		s.awaitFrom, s.fallback = 0, false
		return s, fx
	case ev.fallingBack:
		// The unit's owner was waited for already: its other tuples
		// are not waited for again, one by one.
		s.fallback = true
		return s, fx
	}
	if s.awaitFrom == 0 {
		s.awaitFrom = schedule.InstantOf(d.now) // due here now: the owner's row is due about now too
	}
	if until := s.awaitFrom.Time().Add(ev.wait); d.now.Before(until) {
		fx.awaits = true
		d.plan(&s, &fx, schedule.Outcome{Until: until})
		return s, fx
	}
	s.fallback, fx.fallingBack = true, true
	return s, fx
}

// refusedLog is what a refusal by the key's plan logs.
const refusedLog = "the key's plan refuses this endpoint and window; its series are held, asked again after a reload or in 24 h"

// fetched is an answer fetched here: judged (values, or the answer's own
// failure), then taken as any row is.
func fetched(d door, s cell, ev event, fx effects) (cell, effects) {
	a := ev.answer
	values, conflicts := d.fams.Build(d.tuple, a.Samples)
	problems := append(append([]string(nil), a.Problems...), conflicts...)
	fx.codes["fields_over"] += a.FieldsDropped
	var fail *upstream.Error
	switch {
	case len(values) == 0 && len(problems) > 0:
		// Rows were there, their values were not numbers or could not
		// become series (a family another tuple owns): say so.
		msg := problems[0]
		if n := len(problems); n > 1 {
			msg += " (and " + strconv.Itoa(n-1) + " more)"
		}
		fail = &upstream.Error{Code: "bad_value", Message: d.clean(msg)}
		if len(a.Problems) == 0 {
			// Every value was good: they are another series' family (a
			// field renamed onto a name another concept has).
			fail.Code = "family_conflict"
		}
	case len(values) == 0 && a.Future > 0:
		fail = &upstream.Error{Code: "future_row", Message: d.clean(futureRows(a))}
	case len(values) == 0:
		fail = &upstream.Error{Code: "no_data", Message: "the answer holds no value for any field"}
	}
	if fail != nil {
		fx.codes[fail.Code]++
		ev.err = fail
		if fail.Code == "future_row" {
			// Rows from the future only: nothing new is out, as a poll
			// that missed; the schedule learns nothing from them.
			return futureOnly(d, s, ev, fx)
		}
		return failed(d, s, ev, fx)
	}
	// Served, and what was left out of it counted.
	fx.codes["bad_value"] += len(problems)
	fx.codes["future_row"] += a.Future

	prev := s.Tuple
	lastTry := s.LastAttempt
	n := s.Tuple
	n.LastAttempt = schedule.InstantOf(ev.start)
	n.Samples, n.RowTime, n.Interval = a.Samples, schedule.InstantOf(a.RowTime), min(a.Interval, schedule.MaxSpacing)
	if a.Newest.After(n.Newest.Time()) || n.Newest.IsZero() {
		n.Newest = schedule.InstantOf(a.Newest)
	}
	missedAt := learnCadence(d.tuple, &n, prev, lastTry.Time(), a, d.now)
	n.Block = nil
	if a.HasBlock {
		b := a.Block
		n.Block = &b
	}
	n.Deprecated = a.Deprecated
	// The answer meets the checks a peer's row meets; its plan is this
	// member's own, made below.
	candidate := n
	candidate.Poll = schedule.Poll{}
	if err := admit(d.tuple, &candidate, d.now); err != nil {
		ev.err = &upstream.Error{Code: "bad_value", Message: d.clean(err.Error())}
		fx.codes["bad_value"]++
		return failed(d, s, ev, fx)
	}
	n.LastSuccess = schedule.InstantOf(d.now)
	fx.sent, fx.send, fx.fallback = true, true, s.fallback
	s.awaitFrom, s.fallback = 0, false
	s, fx = succeeded(d, s, n, values, fx, schedule.Outcome{PrevNewest: prev.Newest.Time(), MissedAt: missedAt})
	switch {
	case len(problems) > 0:
		fx.log(&s, "some fields of the answer were skipped", strings.Join(problems, "; "))
	case a.Future > 0:
		fx.log(&s, "rows dated in the future were not served; the newest row before now is", futureRows(a))
	case a.FieldsDropped > 0:
		fx.log(&s, "the answer adds more fields than max_fields; the rest are not served", a.FieldsOver)
	case a.Over != "":
		fx.log(&s, "the upstream sent more series than the entry's limit; the rest are not served", a.Over)
	case a.Page != "":
		fx.log(&s, "the items counted are one page of more; the counts are of that page", a.Page)
	}
	return s, fx
}

// succeeded takes n, a tuple's state after a good row (fetched here, or
// by a peer), with its values: served, its row's delay observed, its next
// refresh planned from o.
func succeeded(d door, s cell, n Tuple, values []exposition.Sample, fx effects, o schedule.Outcome) (cell, effects) {
	prevNewest := s.Newest
	n.OK, n.LastCode, n.Failures = true, "", 0
	n.FailingSince = 0
	s.Tuple, s.values, s.logged = n, values, 0
	fx.samplesChanged, fx.filled = true, true
	if s.Deprecated && !s.deprecatedLog {
		s.deprecatedLog = true
		fx.logs = append(fx.logs, logLine{warn: true, msg: "upstream marks this series deprecated; its data may no longer update"})
	}
	d.plan(&s, &fx, o)
	if spacing(d.tuple.Window, &s.Tuple) > 0 && s.Newest.Time().After(prevNewest.Time()) && d.tuple.CacheTTL == 0 {
		// A delay is never below 0: a row the upstream dates after its
		// end by a clock of its own was out at once, not before it.
		length := rowLength(d.tuple.Window, &s.Tuple)
		if !prevNewest.IsZero() {
			rd := max(d.now.Sub(s.Newest.Time().Add(length)), 0)
			fx.rowDelay = &rd
		}
		pd := max(fx.known.Publication(length), 0)
		fx.pubDelay = &pd
	}
	return s, fx
}

// failed is a refresh that failed: on the wire, its answer, or refused by
// the key's plan.
func failed(d door, s cell, ev event, fx effects) (cell, effects) {
	return failedAs(d, s, ev, fx, schedule.Outcome{Err: failure(ev.err)})
}

// failedAs is failed, planned from o.
func failedAs(d door, s cell, ev event, fx effects, o schedule.Outcome) (cell, effects) {
	e := ev.err
	fx.filled = true
	fx.sent, fx.send, fx.fallback = true, true, s.fallback
	s.awaitFrom, s.fallback = 0, false
	s.LastAttempt = schedule.InstantOf(ev.start)
	s.OK, s.LastCode = false, e.Code
	s.Failures++
	if s.FailingSince.IsZero() {
		s.FailingSince = schedule.InstantOf(ev.start)
	}
	d.plan(&s, &fx, o)
	switch {
	case e.Refused:
		fx.log(&s, refusedLog, e.Error())
		if d.siblingRefused {
			fx.logs[len(fx.logs)-1].warn = false // a sibling in flight with it said so
		}
		fx.refuseKey = e
	case e.Gone:
		// The upstream says the series does not exist as asked: there
		// is no last good value to keep serving.
		s.values, s.Samples = nil, nil
		fx.log(&s, "refresh failed; the series is dropped until the request is fixed", e.Error())
	case s.values == nil:
		fx.log(&s, "refresh failed; the series has no value yet and is not served", e.Error())
	case showValues(s.values, s.OK, s.FailingSince.Time(), d.now, d.maxStaleness):
		fx.log(&s, "refresh failed; serving the last good value until max_staleness", e.Error())
	default:
		fx.log(&s, "refresh failed; the last good value is older than max_staleness and is no longer served", e.Error())
	}
	return s, fx
}

// futureOnly is an answer whose rows are all dated in the future: the
// tuple fails with future_row (nothing is served from it), but the poll
// says nothing of the row it was for: the schedule learns nothing from it
// (no miss, no delay moved: a row dated 9999 moves no publication delay)
// and asks again as it polls a late row (schedule's unreadWait).
func futureOnly(d door, s cell, ev event, fx effects) (cell, effects) {
	return failedAs(d, s, ev, fx, schedule.Outcome{Unread: true})
}

// takePeerRow is a row a peer fetched, taken as if this member had fetched it
// when it passes the door: the checks a state file's entry meets (admit:
// numbers, times, the future-row rule, the file's fields and max_fields,
// the number of samples; times against the later of this member's now
// and the cluster's, so that a member whose clock is behind takes what
// the provider published), newer than what is here, sent by the unit's
// owner (or by a fallback while this member waits for the owner). Its
// plan is this member's: made by this member's policy from the row, with
// what the owner learned of the key.
func takePeerRow(d door, s cell, ev event, fx effects) (cell, effects) {
	row := ev.row
	switch {
	case !ev.fromOwner:
		fx.refused, fx.why = "not_owner", "sent by a member that neither owns the unit nor ranks before this one for it, before the tuple is due here"
		return s, fx
	case !row.LastAttempt.Time().After(s.LastAttempt.Time()):
		fx.refused = "older" // not worth a line: gossip repeats itself
		return s, fx
	}
	if err := admit(d.tuple, row, clock.Later(d.now, ev.clusterNow)); err != nil {
		fx.refused, fx.why = "invalid", err.Error()
		return s, fx
	}
	if err := decode.Fit(d.tuple, row.Samples); err != nil {
		fx.refused, fx.why = "invalid", err.Error()
		return s, fx
	}
	var values []exposition.Sample
	if row.Samples != nil {
		var problems []string
		if values, problems = d.fams.Build(d.tuple, row.Samples); len(problems) > 0 {
			fx.refused, fx.why = "invalid", problems[0]
			return s, fx
		}
	}
	delay := ev.delay
	if delay != nil && delay.Check(spacing(d.tuple.Window, row), d.now) != nil {
		delay = nil
	}
	if delay != nil {
		fx.known.Adopt(*delay)
	}
	prevNewest := s.Newest
	s.awaitFrom, fx.ownerHeard, fx.received = 0, ev.byOwner, true
	n := *row
	if !row.OK {
		// A failure at the owner: its values stay as the owner keeps
		// them, and the tuple is asked again when the owner's plan says,
		// within the horizon the policy itself plans.
		s.Tuple, s.values, fx.samplesChanged, fx.filled = n, values, true, true
		d.plan(&s, &fx, schedule.Outcome{Restored: true})
		fx.replanKey = s.Newest.Time().After(prevNewest.Time())
		return s, fx
	}
	n.Poll = s.Poll
	s, fx = succeeded(d, s, n, values, fx, schedule.Outcome{PrevNewest: prevNewest.Time()})
	// What the owner learned is the key's: this member's run of the
	// policy planned its own next refresh and kept the parts its series
	// play here (which leads, which follows), and learns nothing twice.
	if delay != nil {
		fx.known.Adopt(*delay)
	}
	// The owner's plan, where it lies within a row of this member's own:
	// the members then come due together, and the owner's row arrives
	// before this member's wait for it runs out. A plan further ahead (a
	// day, from a rogue) is not taken.
	if w := spacing(d.tuple.Window, &s.Tuple); !row.Next.Time().After(s.Next.Time().Add(max(w, minInterval))) {
		s.Poll = row.Poll
	}
	fx.replanKey = s.Newest.Time().After(prevNewest.Time())
	if fx.pubDelay != nil {
		pd := max(fx.known.Publication(rowLength(d.tuple.Window, &s.Tuple)), 0)
		fx.pubDelay = &pd
	}
	return s, fx
}

// plan runs the policy on the event o and keeps the plan it returns: the
// one place a tuple's next refresh is set. What the key's other tuples
// wait for may have changed (replanKey).
func (d door) plan(s *cell, fx *effects, o schedule.Outcome) {
	se := d.sched.series(d.tuple, &s.Tuple)
	var siblings bool
	fx.known, s.Poll, siblings = d.sched.book.Policy().Step(fx.known, se, s.Poll, o, d.now)
	fx.planned = true
	fx.replanKey = fx.replanKey || siblings
}

// rebuild builds the values of a state taken back; a state whose values
// cannot become series (a label set changed) is asked again at once.
func (d door) rebuild(s cell, fx effects) (cell, effects) {
	s.values, fx.samplesChanged = nil, true
	if s.Samples == nil {
		return s, fx
	}
	values, problems := d.fams.Build(d.tuple, s.Samples)
	if len(problems) > 0 {
		s.Samples = nil
		d.plan(&s, &fx, schedule.Outcome{Reset: true})
		fx.logs = append(fx.logs, logLine{msg: "cached values dropped: the tuple's labels changed"})
		return s, fx
	}
	s.values = values
	return s, fx
}

// decodeError is an answer that could not be read.
type decodeError struct{ msg string }

func (e *decodeError) Error() string { return e.msg }

// failure is what the policy needs of an error.
func failure(e *upstream.Error) *schedule.Failure {
	return &schedule.Failure{RetryAfter: e.RetryAfter, Hold: e.Hold, PauseUntil: e.PauseUntil}
}

// futureRows says which rows an answer dated in the future.
func futureRows(d *decode.Answer) string {
	return fmt.Sprintf("%d row(s) dated up to %s, after now by more than a row's spacing", d.Future, d.FutureAt.UTC().Format(time.RFC3339))
}
