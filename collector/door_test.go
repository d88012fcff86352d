package collector

import (
	"strings"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/decode"
	"github.com/onchain-exporter/onchain_exporter/exposition"
	"github.com/onchain-exporter/onchain_exporter/schedule"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// TestDoor is the transition as a table: a tuple's state and an event in,
// the new state and its effects out; no engine, no clock. Every source of
// a row meets the same checks, and a row refused leaves the tuple as it
// was.
func TestDoor(t *testing.T) {
	hour := time.Hour
	now := time.Date(2026, 11, 20, 12, 0, 30, 0, time.UTC) // 30 s after the 11:00 row closed
	field := &config.Field{Name: "door_value", Help: "A value.", Type: "gauge", Scale: 1}
	tu := &config.Tuple{API: "data", Key: "k", Path: "/v1/x", Window: "hour", Group: &config.LabelGroup{Name: "g", Names: []string{"api"}},
		Fields: map[string]*config.Field{"v": field}, LabelValues: []string{"data"}}
	sample := func(v float64) []decode.Sample { return []decode.Sample{{Field: field, Value: v}} }
	row11 := time.Date(2026, 11, 20, 11, 0, 0, 0, time.UTC)
	answer := &decode.Answer{Samples: sample(7), RowTime: row11, Newest: row11, HasShape: true}
	// had is a tuple that served the 10:00 row and waits for 11:00.
	had := cell{Tuple: Tuple{Samples: sample(6), RowTime: schedule.InstantOf(row11.Add(-hour)), Newest: schedule.InstantOf(row11.Add(-hour)), OK: true,
		LastSuccess: schedule.InstantOf(now.Add(-hour)), LastAttempt: schedule.InstantOf(now.Add(-hour))}}
	had.Next = schedule.InstantOf(now)
	learned := schedule.Known{Members: 1, Key: schedule.Estimate{First: hour + 20*time.Second, Depth: 5 * time.Second,
		Learned: true, Seen: row11.Add(-hour)}}
	owners := learned
	owners.Key.First, owners.Key.Seen = hour+25*time.Second, row11
	fromFuture := func() *Tuple {
		r := had.Tuple
		// Past the future-row rule of an answer: more than a row's
		// spacing after now.
		ahead := now.Add(hour + 9*time.Minute)
		r.Samples, r.RowTime, r.Newest, r.LastAttempt, r.LastSuccess = sample(999999), schedule.InstantOf(ahead), schedule.InstantOf(ahead), schedule.InstantOf(now), schedule.InstantOf(now)
		return &r
	}
	peer := func(edit func(r *Tuple)) *Tuple {
		r := had.Tuple
		r.Samples, r.RowTime, r.Newest, r.LastAttempt, r.LastSuccess = sample(7), schedule.InstantOf(row11), schedule.InstantOf(row11), schedule.InstantOf(now), schedule.InstantOf(now)
		r.Next = schedule.InstantOf(now.Add(23 * hour)) // a plan far ahead: this member plans its own
		if edit != nil {
			edit(&r)
		}
		return &r
	}
	many := make([]decode.Sample, 100_000)
	for i := range many {
		many[i] = decode.Sample{Field: field, Value: 1}
	}
	other := &config.Field{Name: "injected", Help: "A value.", Type: "gauge", Scale: 1}

	type want struct {
		ok        bool
		value     float64 // the value served (0: none)
		next      time.Time
		refused   string
		codes     map[string]int
		log       string // a line logged at warn, by its start
		send      bool
		rowDelay  time.Duration // observed, when set
		pubDelay  time.Duration
		noPub     bool
		refuseKey bool
		// heard: the unit's owner is heard again (its units waited for
		// anew); only a row from the owner itself says so.
		heard bool
	}
	cases := []struct {
		name  string
		s     cell
		known schedule.Known
		ev    event
		fromD func(*door)
		want  want
	}{
		{"an answer with the new row", had, learned, event{kind: evFetched, start: now, answer: answer},
			nil, want{ok: true, value: 7, next: row11.Add(2*hour + 20*time.Second), send: true,
				rowDelay: 30 * time.Second, pubDelay: 20 * time.Second}},
		{"an answer of rows from the future only", had, learned, event{kind: evFetched, start: now,
			answer: &decode.Answer{Future: 1, FutureAt: time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)}},
			nil, want{ok: false, value: 6, next: now.Add(schedule.Default.LearnStep(hour)), codes: map[string]int{"future_row": 1},
				log: "refresh failed; serving the last good value", send: true, noPub: true}},
		{"a refresh that failed", had, learned, event{kind: evFailed, start: now, err: &upstream.Error{Code: "server_error"}},
			nil, want{ok: false, value: 6, next: now.Add(15 * time.Second), log: "refresh failed; serving the last good value", send: true, noPub: true}},
		{"held back by the budget: a wait, asked when it has a call", had, learned, event{kind: evHeld, start: now, err: &upstream.Error{Code: "budget_exhausted", HeldBack: true, RetryAfter: time.Minute}},
			nil, want{ok: true, value: 6, next: now.Add(time.Minute), noPub: true}},
		{"held back by rate_limit: a wait, asked at its next turn, not before the 5 s floor", had, learned, event{kind: evHeld, start: now, err: &upstream.Error{Code: "rate_limited", HeldBack: true, RetryAfter: time.Second}},
			nil, want{ok: true, value: 6, next: now.Add(5 * time.Second), noPub: true}},
		{"refused by the key's plan", had, learned, event{kind: evRefused, start: now, err: &upstream.Error{Code: upstream.PlanRefused, Refused: true, Hold: 24 * hour}},
			nil, want{ok: false, value: 6, next: now.Add(24 * hour), log: refusedLog, send: true, refuseKey: true, noPub: true}},
		{"held for a sibling's refusal", had, learned, event{kind: evRefused, sibling: true, err: &upstream.Error{Code: upstream.PlanRefused, Refused: true, Hold: 24 * hour}},
			nil, want{ok: false, value: 6, next: now.Add(24 * hour), send: true, noPub: true}},
		{"a peer's row from the owner", had, learned, event{kind: evPeerRow, row: peer(nil), delay: &owners.Key, fromOwner: true, byOwner: true},
			nil, want{ok: true, value: 7, next: row11.Add(2*hour + 25*time.Second), rowDelay: 30 * time.Second, pubDelay: 25 * time.Second, heard: true}},
		{"a peer's row from a member falling back for the owner", had, learned, event{kind: evPeerRow, row: peer(nil), delay: &owners.Key, fromOwner: true},
			nil, want{ok: true, value: 7, next: row11.Add(2*hour + 25*time.Second), rowDelay: 30 * time.Second, pubDelay: 25 * time.Second}},
		{"a peer's row from a member that does not own the unit", had, learned, event{kind: evPeerRow, row: peer(nil), fromOwner: false},
			nil, want{ok: true, value: 6, next: now, refused: "not_owner", noPub: true}},
		{"a peer's row no newer than what is here", had, learned, event{kind: evPeerRow, row: peer(func(r *Tuple) { r.LastAttempt = had.LastAttempt }), fromOwner: true},
			nil, want{ok: true, value: 6, next: now, refused: "older", noPub: true}},
		{"a peer's row from the future", had, learned, event{kind: evPeerRow, row: fromFuture(), fromOwner: true},
			nil, want{ok: true, value: 6, next: now, refused: "invalid", noPub: true}},
		{"a peer's row of 100 000 samples", had, learned, event{kind: evPeerRow, row: peer(func(r *Tuple) { r.Samples = many }), fromOwner: true},
			nil, want{ok: true, value: 6, next: now, refused: "invalid", noPub: true}},
		{"a peer's row with a field the file does not ask for", had, learned, event{kind: evPeerRow,
			row: peer(func(r *Tuple) { r.Samples = []decode.Sample{{Field: other, Value: 1}} }), fromOwner: true},
			nil, want{ok: true, value: 6, next: now, refused: "invalid", noPub: true}},
		{"a peer's row with a label its field does not have", had, learned, event{kind: evPeerRow,
			row: peer(func(r *Tuple) {
				r.Samples = []decode.Sample{{Field: field, Value: 1, Extra: &decode.Extra{Names: []string{"x"}, Values: []string{"y"}}}}
			}), fromOwner: true},
			nil, want{ok: true, value: 6, next: now, refused: "invalid", noPub: true}},
		{"a saved entry", cell{}, schedule.Known{Fresh: true}, event{kind: evSaved, row: &had.Tuple},
			nil, want{ok: true, value: 6, next: now, noPub: true}},
		{"a saved entry planned a year ahead", cell{}, schedule.Known{Fresh: true}, event{kind: evSaved,
			row: func() *Tuple { r := had.Tuple; r.Next = schedule.InstantOf(now.Add(365 * 24 * hour)); return &r }()},
			nil, want{ok: true, value: 6, next: now, noPub: true}},
		{"a reset", func() cell { s := had; s.Next = schedule.InstantOf(now.Add(hour)); return s }(), learned, event{kind: evReset},
			nil, want{ok: true, value: 6, next: now, noPub: true}},
		{"a leader chasing", had, learned, event{kind: evLeaderChasing},
			nil, want{ok: true, value: 6, next: now.Add(schedule.Default.LearnStep(hour)), noPub: true}},
		{"a sibling found the row", func() cell { s := had; s.Next = schedule.InstantOf(now.Add(hour)); return s }(), learned,
			event{kind: evSiblingFound, until: now.Add(5 * time.Second)},
			nil, want{ok: true, value: 6, next: now.Add(5 * time.Second), noPub: true}},
		{"an owner awaited", had, learned, event{kind: evAwaitOwner, wait: 10 * time.Second},
			nil, want{ok: true, value: 6, next: now.Add(10 * time.Second), noPub: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fams := exposition.NewFamilies()
			d := door{tuple: tu, sched: &apiSchedule{book: schedule.NewBook(nil)}, fams: fams,
				maxStaleness: 10 * time.Minute, clean: func(m string) string { return m }, known: tc.known, now: now}
			s := tc.s
			if s.Samples != nil {
				s.values, _ = fams.Build(tu, s.Samples)
			}
			before := s
			got, fx := step(d, s, tc.ev)
			w := tc.want
			if fx.refused != w.refused {
				t.Fatalf("refused %q (%s), want %q", fx.refused, fx.why, w.refused)
			}
			if got.OK != w.ok {
				t.Errorf("ok %v, want %v", got.OK, w.ok)
			}
			if fx.refused == "" && !got.Next.Time().Equal(w.next) {
				t.Errorf("next %s, want %s", got.Next.Time().Format(time.TimeOnly), w.next.Format(time.TimeOnly))
			}
			if fx.refused != "" && (got.LastAttempt != before.LastAttempt || len(got.Samples) != len(before.Samples)) {
				t.Errorf("a refused row changed the tuple: %+v", got.Tuple)
			}
			value := 0.0
			if len(got.values) > 0 {
				value = got.Samples[0].Value
				if line := string(got.values[0].Line()); !strings.Contains(line, "door_value") {
					t.Errorf("served %q", line)
				}
			}
			if value != w.value {
				t.Errorf("serves %v, want %v", value, w.value)
			}
			if fx.ownerHeard != w.heard {
				t.Errorf("owner heard %v, want %v", fx.ownerHeard, w.heard)
			}
			for code, n := range w.codes {
				if fx.codes[code] != n {
					t.Errorf("api_errors_total{code=%q} +%d, want +%d", code, fx.codes[code], n)
				}
			}
			warned := ""
			for _, l := range fx.logs {
				if l.warn {
					warned = l.msg
				}
			}
			if !strings.HasPrefix(warned, w.log) || (w.log == "" && warned != "") {
				t.Errorf("logged %q at warn, want %q", warned, w.log)
			}
			if fx.send != w.send {
				t.Errorf("sent to the cluster: %v, want %v", fx.send, w.send)
			}
			if (fx.refuseKey != nil) != w.refuseKey {
				t.Errorf("holds the key's other tuples: %v, want %v", fx.refuseKey != nil, w.refuseKey)
			}
			if w.rowDelay != 0 && (fx.rowDelay == nil || *fx.rowDelay != w.rowDelay) {
				t.Errorf("row delay %v, want %v", fx.rowDelay, w.rowDelay)
			}
			switch {
			case w.noPub && fx.pubDelay != nil:
				t.Errorf("publication delay set to %v, want it left", *fx.pubDelay)
			case !w.noPub && (fx.pubDelay == nil || *fx.pubDelay != w.pubDelay):
				t.Errorf("publication delay %v, want %v", fx.pubDelay, w.pubDelay)
			}
		})
	}
}

// TestDoorLogsOnce: the same failure twice is said at warn once.
func TestDoorLogsOnce(t *testing.T) {
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	tu := &config.Tuple{API: "data", Key: "k", Path: "/v1/x", Window: "hour"}
	d := door{tuple: tu, sched: &apiSchedule{book: schedule.NewBook(nil)}, fams: exposition.NewFamilies(),
		clean: func(m string) string { return m }, known: schedule.Known{Fresh: true}, now: now}
	ev := event{kind: evFailed, start: now, err: &upstream.Error{Code: "server_error", Message: "boom"}}
	s, fx := step(d, cell{}, ev)
	if len(fx.logs) != 1 || !fx.logs[0].warn {
		t.Fatalf("first failure logged %+v, want one line at warn", fx.logs)
	}
	_, fx = step(d, s, ev)
	if len(fx.logs) != 1 || fx.logs[0].warn {
		t.Fatalf("second failure logged %+v, want one line at debug", fx.logs)
	}
}
