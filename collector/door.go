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

// The one door of a tuple's state: whatever changes a tuple is an event,
// and step, a pure function (no lock, no I/O, no clock), takes the state
// and the event and returns the new state and its effects, which the
// engine applies in one place (applyLocked).

// eventKind is what happened to a tuple.
type eventKind uint8

const (
	evFetched       eventKind = iota // an answer fetched here and decoded (answer)
	evFailed                         // a refresh that failed, on the wire or its answer (err)
	evHeld                           // rate_limit or daily_budget held a refresh back, unsent (err)
	evRefused                        // the key's plan refused the request (err); sibling: another tuple's was
	evPeerRow                        // a row a peer fetched (row, delay)
	evSaved                          // a state file's entry (row), at start
	evReset                          // ask at once (a reload may have fixed a failure)
	evRebuild                        // a reload kept the tuple: values built again with its labels
	evSiblingFound                   // another series of its key found its row: due at until, the floor kept
	evLeaderChasing                  // due while its key's leader chases the row
	evAwaitOwner                     // due in a cluster: wait is rank × peer timeout (0: owner)
	evPlanChanged                    // the key's plan changed: a tuple it held is asked at once
)

// event is one thing that happened to a tuple.
type event struct {
	kind   eventKind
	start  time.Time // when a refresh was sent
	answer *decode.Answer
	err    *upstream.Error
	// sibling: an evRefused learned from another tuple's call.
	sibling bool
	// row is the state a peer or a state file offers; delay what the key
	// learned at the peer. fromOwner: the peer owns the unit, or this
	// member waits for the owner (a fallback's row is then as good);
	// byOwner: the owner itself sent it.
	row       *Tuple
	delay     *schedule.Estimate
	fromOwner bool
	byOwner   bool
	said      string // the sender's text of a peer row's failure
	// clusterNow is now on the cluster's (the provider's) clock: a member
	// whose clock is behind still takes rows dated after its own now.
	clusterNow time.Time
	until      time.Time
	// decodeFailed: the answer could not be read (code "decode").
	decodeFailed bool
	// wait and fallingBack: evAwaitOwner.
	wait        time.Duration
	fallingBack bool
}

// cell is what the door changes of a tuple: what it learned (Tuple,
// saved and sent whole) and what this process keeps beside it.
type cell struct {
	Tuple
	values        []exposition.Sample // built from Samples, ready to serve
	logged        uint32              // the last line logged, as loggedKey
	deprecatedLog bool
	// fallback: its refresh is this member's own, the owner's row not come.
	fallback bool
	heldAt   schedule.Instant // when the last refresh was held back
	// awaitFrom is when it came due while waiting for its unit's owner
	// (0: not waiting).
	awaitFrom schedule.Instant
}

// door is what step reads besides the tuple's state; never written.
type door struct {
	tuple        *config.Tuple
	sched        *apiSchedule
	fams         *exposition.Families
	maxStaleness time.Duration
	clean        func(string) string // upstream.Client.Clean
	known        schedule.Known
	// siblingRefused: another tuple of the key said its refusal already.
	siblingRefused bool
	now            time.Time
}

// logLine is a line to log about the tuple: warn, or debug when said
// already.
type logLine struct {
	warn     bool
	msg, err string
}

// effects are what an event does beyond the tuple's state.
type effects struct {
	// refused says why the row offered (evPeerRow, evSaved) was not
	// taken, for a counter; why, for the log. The tuple keeps what it had.
	refused, why string
	known        schedule.Known // what the key learned, kept when planned
	planned      bool
	replanKey    bool           // what the key's other tuples wait for changed
	codes        map[string]int // added to api_errors_total
	logs         []logLine
	// rowDelay is observed in row_delay_seconds; pubDelay is the key's
	// publication_delay_seconds.
	rowDelay, pubDelay *time.Duration
	// sent: a refresh left, counted by role (fallback or owner); send:
	// the row goes to the cluster; received: a peer's row was taken.
	sent, fallback, send, received bool
	// held: the refresh was held back by holdBy; none of the API starts
	// before holdUntil.
	held      bool
	holdUntil time.Time
	holdBy    string
	filled    bool            // the first refresh (or a row standing for it) ended
	refuseKey *upstream.Error // hold the key's other tuples with this refusal
	// ownerHeard: the unit's owner is heard again.
	ownerHeard     bool
	samplesChanged bool
	// awaits: waiting for the unit's owner, not fetched now; fallingBack:
	// the owner was waited for in vain, its other tuples are not again.
	awaits, fallingBack bool
}

// log adds a line, at warn the first time the tuple says it.
func (fx *effects) log(s *cell, msg, err string) {
	key := loggedKey(msg, err)
	fx.logs = append(fx.logs, logLine{warn: s.logged != key, msg: msg, err: err})
	s.logged = key
}

// loggedKey is a line's message and error as cell.logged keeps them: a
// 32-bit FNV-1a hash, to save a tuple's memory. A new line of the same
// hash would be logged at debug, not warn: once in 2^32.
func loggedKey(msg, err string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(msg))
	h.Write([]byte{0})
	h.Write([]byte(err))
	return h.Sum32()
}

// step is the transition. Outside input (a peer's row, a state file's
// entry, an answer) meets the same checks here (admit), taken or refused
// whole.
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
		// Nothing was tried: the value stays served as it was
		// (max_staleness does not run) and nothing is learned. Due
		// again when the limit has a turn: a wait, not a failure.
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

// awaitOwner is a tuple due in a cluster: the owner fetches it now;
// another member waits rank × peer timeout for the owner's row, then
// fetches it as a fallback.
func awaitOwner(d door, s cell, ev event, fx effects) (cell, effects) {
	switch {
	case ev.wait <= 0:
		s.awaitFrom, s.fallback = 0, false
		return s, fx
	case ev.fallingBack:
		s.fallback = true // the owner was waited for already
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
		msg := problems[0]
		if n := len(problems); n > 1 {
			msg += " (and " + strconv.Itoa(n-1) + " more)"
		}
		fail = &upstream.Error{Code: "bad_value", Message: d.clean(msg)}
		if len(a.Problems) == 0 {
			fail.Code = "family_conflict" // good values of another series' family
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
			// Rows dated in the future only: the poll says nothing of its
			// row, and the schedule learns nothing (a row dated 9999
			// moves no delay); asked again as a late row is.
			return failedAs(d, s, ev, fx, schedule.Outcome{Unread: true})
		}
		return failed(d, s, ev, fx)
	}
	fx.codes["bad_value"] += len(problems)
	fx.codes["future_row"] += a.Future

	prev, n := s.Tuple, s.Tuple
	n.LastAttempt = schedule.InstantOf(ev.start)
	n.Samples, n.RowTime, n.Interval = a.Samples, schedule.InstantOf(a.RowTime), min(a.Interval, schedule.MaxSpacing)
	if a.Newest.After(n.Newest.Time()) || n.Newest.IsZero() {
		n.Newest = schedule.InstantOf(a.Newest)
	}
	missedAt := learnCadence(d.tuple, &n, prev, a, d.now)
	n.Block = nil
	if a.HasBlock {
		b := a.Block
		n.Block = &b
	}
	n.Deprecated = a.Deprecated
	// The answer meets a peer row's checks; its plan is made below.
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

// succeeded takes n, a tuple's state after a good row, with its values:
// served, its row's delay observed, its next refresh planned from o.
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
		// Never below 0: a row dated after its end by the upstream's
		// clock was out at once.
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

// failed is a refresh that failed, or was refused by the key's plan.
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
	case e.Gone: // no such series upstream: no last good value to keep serving
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

// takePeerRow is a row a peer fetched, taken as if fetched here when it
// comes from the owner (or a fallback), is newer than what is here and
// passes a state file entry's checks (admit, times against the later of
// this member's now and the cluster's). Its plan is this member's own,
// with what the owner learned of the key.
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
	err := admit(d.tuple, row, clock.Later(d.now, ev.clusterNow))
	if err == nil {
		err = decode.Fit(d.tuple, row.Samples)
	}
	if err != nil {
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
	if !row.OK { // a failure at the owner: planned as the owner's plan says, within the policy's horizon
		s.Tuple, s.values, fx.samplesChanged, fx.filled = n, values, true, true
		d.plan(&s, &fx, schedule.Outcome{Restored: true})
		fx.replanKey = s.Newest.Time().After(prevNewest.Time())
		return s, fx
	}
	n.Poll = s.Poll
	s, fx = succeeded(d, s, n, values, fx, schedule.Outcome{PrevNewest: prevNewest.Time()})
	// What the owner learned is the key's; the roles its series play here
	// (leader, followers) stay this member's.
	if delay != nil {
		fx.known.Adopt(*delay)
	}
	// The owner's plan, within a row of this member's own: the members
	// come due together. One further ahead (a rogue's) is not taken.
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

// plan runs the policy on o and keeps its plan: the one place a tuple's
// next refresh is set.
func (d door) plan(s *cell, fx *effects, o schedule.Outcome) {
	se := d.sched.series(d.tuple, &s.Tuple)
	var siblings bool
	fx.known, s.Poll, siblings = d.sched.book.Policy().Step(fx.known, se, s.Poll, o, d.now)
	fx.planned = true
	fx.replanKey = fx.replanKey || siblings
}

// rebuild builds the values of a state taken back; one whose values
// cannot (its labels changed) is asked again at once.
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
