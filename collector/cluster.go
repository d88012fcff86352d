package collector

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/go-kit/log/level"

	"github.com/onchain-exporter/onchain_exporter/cluster"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/decode"
	"github.com/onchain-exporter/onchain_exporter/schedule"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// Replicas that share their calls (package cluster). Each unit, a delay
// key, has an owner among the live members, which refreshes its tuples
// and sends every outcome with the key's learned estimate; the others
// take it as if fetched (adopt). A member whose owner's row has not come
// waits rank × --cluster.peer-timeout past the due time, then fetches
// itself: a dead owner costs a late row, never a gap. A joining member
// takes every state by push/pull and serves at once. Gossip never
// carries a credential.

// stateKey is the name the rows register under with package cluster.
const stateKey = "rows"

// peerRow is one outcome of a tuple as a member sends it.
type peerRow struct {
	API     string        `json:"api"`
	Key     string        `json:"key"`
	Digest  string        `json:"digest"` // digest: the same request and series
	State   Tuple         `json:"state"`  // its Samples go as Samples
	Samples []decode.Wire `json:"s,omitempty"`
	// Delay is what the key learned of publication delays, at the owner.
	Delay *schedule.Estimate `json:"delay,omitempty"`
	// Member and its count of the API's calls on the UTC day Day
	// (budget.ObservePeer).
	Member string    `json:"member"`
	Day    time.Time `json:"day"`
	Used   int       `json:"used"`
	// Err is the sender's text of the tuple's last failure, masked there.
	Err string `json:"err,omitempty"`
}

// appendRows appends the state of every tuple that has had a refresh.
func (c *apiCollector) appendRows(rows []peerRow, peer *cluster.Peer) []peerRow {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.states {
		if !st.LastAttempt.IsZero() {
			rows = append(rows, c.rowLocked(st, peer))
		}
	}
	return rows
}

// rowLocked is what the cluster is sent of a tuple.
func (c *apiCollector) rowLocked(st *tupleState, peer *cluster.Peer) peerRow {
	row := peerRow{API: c.name, Key: st.tuple.Key, Digest: c.digestLocked(st.tuple), State: st.Tuple, Member: peer.Name(),
		Samples: decode.ToWire(st.tuple, st.Samples), Err: upstream.Cut(st.lastError())}
	row.State.Samples = nil
	if e, ok := c.sched.book.Estimate(st.delayKey()); ok {
		row.Delay = &e
	}
	if b := c.up.Budget(); b != nil {
		row.Day, row.Used = b.OwnDay(c.clk.Now()) // the budget's day: the cluster's
	}
	return row
}

// digestLocked is digest(t), made once for each tuple in force (a full
// state needs one a row); dropped tuples are forgotten now and then.
func (c *apiCollector) digestLocked(t *config.Tuple) string {
	if d, ok := c.digests[t]; ok {
		return d
	}
	if c.digests == nil || len(c.digests) > 2*len(c.states)+64 {
		c.digests = map[*config.Tuple]string{}
	}
	d := digest(t)
	c.digests[t] = d
	return d
}

// sendLocked sends the outcome of a refresh this member made; c.peer is
// set.
func (c *apiCollector) sendLocked(st *tupleState) {
	b, err := json.Marshal(c.rowLocked(st, c.peer))
	if err != nil {
		level.Debug(c.logger).Log("msg", "a row could not be sent to the cluster", "err", err)
		return
	}
	c.rows.Broadcast(b)
}

// replanSoon hands the keys a delta touched to the engine's loop
// (replanPendingLocked): a burst of deltas costs one pass over a key,
// not one each (issue 34).
func (r replicated) replanSoon(later map[*apiCollector]map[string]bool) {
	for c, keys := range later {
		c.mu.Lock()
		if c.replanPending == nil {
			c.replanPending = map[string]bool{}
		}
		maps.Copy(c.replanPending, keys)
		c.unlockWake()
	}
}

// replanPendingLocked places again the keys of replanSoon.
func (c *apiCollector) replanPendingLocked() {
	if keys := c.replanPending; len(keys) > 0 {
		c.replanPending = nil
		c.replanKeysLocked(keys)
	}
}

// replanKeysLocked places again every tuple of keys, in the keys' order.
func (c *apiCollector) replanKeysLocked(keys map[string]bool) {
	for _, key := range slices.Sorted(maps.Keys(keys)) {
		c.replanKeyLocked(key)
	}
}

// adoptRows hands rows to the door under one hold of the lock; the keys
// to place again once every row is in are added to later.
func (c *apiCollector) adoptRows(rows []peerRow, later map[string]bool) {
	c.mu.Lock()
	c.replanLater = later
	for _, row := range rows {
		c.adoptLocked(row)
	}
	c.replanLater = nil
	c.unlockWake()
}

// adoptLocked hands a tuple's outcome a peer fetched to the door
// (evPeerRow); a refusal is counted by reason.
func (c *apiCollector) adoptLocked(row peerRow) {
	now := c.clk.Now()
	if b := c.up.Budget(); b != nil && row.Member != "" && row.Member != c.peer.Name() {
		// The peer's calls count against daily_budget and rate_limit here.
		c.up.ObservePeerCalls(b.ObservePeer(row.Member, row.Day, row.Used, now))
	}
	st := c.byTuple[row.Key]
	switch {
	case st == nil || st.removed:
		return
	case row.Digest != c.digestLocked(st.tuple):
		c.applyLocked(st, effects{refused: "another_request"}) // a peer on another configuration
		return
	}
	key := st.delayKey()
	owner, _ := c.peer.Owner(key)
	_, falling := c.fallingBack[key]
	// Another member's row is a fallback's: taken once the tuple is due
	// here; from one ranked before this member at any time (its wait for
	// the owner ends first).
	fromOwner := owner == row.Member || c.peer.Ahead(row.Member, key) || falling || st.awaitFrom != 0 || st.LastAttempt.IsZero() || !st.Next.Time().After(now)
	state := row.State
	// On the cluster's clock (the provider's): a member whose clock is
	// behind still takes the rows the provider has published.
	clusterNow := c.peer.ClusterTime(now)
	if err := peerRowAhead(st.tuple, &state, clusterNow); err != nil {
		c.applyLocked(st, effects{refused: "invalid", why: err.Error()})
		return
	}
	switch {
	case !state.OK:
		state = c.peerFailureLocked(st, state, now)
	case row.Samples != nil:
		samples, ok := decode.FromWire(st.tuple, row.Samples)
		if !ok {
			c.applyLocked(st, effects{refused: "invalid", why: "a sample names no field the file asks of this tuple"})
			return
		}
		state.Samples = samples
	}
	c.handleLocked(st, event{kind: evPeerRow, row: &state, delay: row.Delay, fromOwner: fromOwner, byOwner: owner == row.Member, said: row.Err, clusterNow: clusterNow})
	if c.replanLater[key] {
		c.planLocked(st) // now, its key's others after the batch: the queue stays in order
	}
}

// peerAheadTolerance is how far after now a peer's row may be dated:
// clocks differ by seconds. A row dated further ahead would have every
// member wait for a row that does not come (an hour row 59 min ahead made
// the next real row 1.5 h late).
const peerAheadTolerance = decode.DefaultFutureTolerance

// peerRowAhead says why a peer's row of t is dated too far ahead of now,
// or nil.
func peerRowAhead(t *config.Tuple, s *Tuple, now time.Time) error {
	limit := now.Add(min(peerAheadTolerance, decode.FutureTolerance(t)))
	for _, tm := range []struct {
		name string
		at   time.Time
	}{{"row_time", s.RowTime.Time()}, {"newest", s.Newest.Time()}, {"since", s.Since.Time()}} {
		if tm.at.After(limit) {
			return fmt.Errorf("a peer's %s %s is after now (%s): a peer's row is never dated ahead", tm.name,
				tm.at.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
		}
	}
	return nil
}

// peerFailureLocked is what this member takes of a failure a peer saw:
// that it failed, since when (not before this member's last success),
// and a plan no later than this member's longest error step (a hold or a
// pause is the upstream's word to the member that called). The values
// and row times stay this member's own.
func (c *apiCollector) peerFailureLocked(st *tupleState, row Tuple, now time.Time) Tuple {
	n := st.Tuple
	n.OK, n.LastCode, n.LastAttempt, n.Failures = false, row.LastCode, row.LastAttempt, row.Failures
	n.FailingSince = row.FailingSince
	if n.FailingSince.Time().Before(st.LastSuccess.Time()) {
		n.FailingSince = st.LastSuccess
	}
	if n.FailingSince.Time().After(row.LastAttempt.Time()) {
		n.FailingSince = row.LastAttempt
	}
	if !st.OK && !st.FailingSince.IsZero() && st.FailingSince.Time().Before(n.FailingSince.Time()) {
		n.FailingSince = st.FailingSince // failing here already
	}
	n.Poll = row.Poll
	if steps := c.sched.book.Policy().ErrorSteps; len(steps) > 0 {
		if most := now.Add(steps[len(steps)-1]); n.Next.Time().After(most) {
			n.Next = schedule.InstantOf(most)
		}
	}
	return n
}

// awaitOwnerLocked says whether a tuple due at now waits for its unit's
// owner; its plan is then when this member falls back.
func (c *apiCollector) awaitOwnerLocked(st *tupleState, now time.Time) bool {
	if c.peer == nil {
		return false
	}
	key := st.delayKey()
	_, falling := c.fallingBack[key]
	fx := c.transitLocked(st, event{kind: evAwaitOwner, wait: c.peer.FallbackDelay(key), fallingBack: falling})
	if fx.fallingBack {
		c.fallingBack[key] = now
	}
	return fx.awaits
}

// ownedLocked counts the units this member owns.
func (c *apiCollector) ownedLocked() int {
	n := 0
	for key := range c.byKey {
		if c.peer.Rank(key) == 0 {
			n++
		}
	}
	return n
}

// membersChanged plans again after the members changed: units may have
// moved, and a tuple waiting for an owner that left is due now.
func (c *apiCollector) membersChanged() {
	c.mu.Lock()
	clear(c.fallingBack) // ranks moved: each unit's owner is waited for anew
	for _, st := range c.states {
		if st.awaitFrom != 0 {
			c.planLocked(st)
		}
	}
	c.cm.Owned.WithLabelValues(c.name).Set(float64(c.ownedLocked()))
	c.unlockWake()
}

// watchMembers follows the cluster's membership until stop: a change
// moves units and tells the budgets the members; a budget a reload put
// in force is told within membersEvery.
func (e *Exporter) watchMembers(stop <-chan struct{}) {
	most, day := 0, time.Time{}
	tick := time.NewTicker(membersEvery)
	defer tick.Stop()
	changed := e.peer.Changed()
	for moved := true; ; {
		var others []string
		for _, m := range e.peer.Members() {
			if m.Name != e.peer.Name() {
				others = append(others, m.Name)
			}
		}
		n := len(others) + 1
		if d := e.peer.ClusterTime(e.now()).UTC().Truncate(24 * time.Hour); !d.Equal(day) { // the cluster's day, as the budget's
			most, day = n, d // the most seen today
		}
		most = max(most, n)
		for _, c := range *e.served.Load() {
			if b := c.view.Load().up.Budget(); b != nil {
				b.SetMembers(others, most)
			}
			if moved {
				c.membersChanged()
			}
		}
		select {
		case <-stop:
			return
		case <-changed:
			changed, moved = e.peer.Changed(), true
		case <-tick.C:
			moved = false
		}
	}
}

// membersEvery is how often the budgets are told the members without a
// change (a count refused meanwhile comes again whole with the next row).
const membersEvery = 5 * time.Second
