package collector

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-kit/log"

	"github.com/onchain-exporter/onchain_exporter/budget"
	"github.com/onchain-exporter/onchain_exporter/cluster"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/decode"
	"github.com/onchain-exporter/onchain_exporter/exposition"
	"github.com/onchain-exporter/onchain_exporter/internal/clock"
	"github.com/onchain-exporter/onchain_exporter/schedule"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// apiCollector is the refresh engine of one API (engine.go) and what it
// publishes for scrapes; a reload reconciles it (reconcile.go).
type apiCollector struct {
	name      string
	m         *selfMetrics
	bm        *budget.Metrics
	clk       clock.Clock
	logger    log.Logger
	idleAfter time.Duration // Options.IdleAfter

	ctx    context.Context // parent of every refresh; cancelled on close
	cancel context.CancelFunc
	wg     sync.WaitGroup

	wakeup   chan struct{} // a refresh ended, a scrape came, a timer fired: plan again
	loopDone chan struct{}

	// peer is the cluster (nil: alone), rows its channel, cm its families.
	peer *cluster.Peer
	rows *cluster.Channel
	cm   *cluster.RowMetrics

	mu sync.Mutex // guards what follows and every tupleState of this API
	// The configuration in force, replaced by reconcile.
	api   *config.API
	up    *upstream.Client
	sched *apiSchedule
	fams  *exposition.Families
	tf    *tupleFamilies

	states []*tupleState
	// queue holds the tuples not in flight by when each is due; byKey the
	// tuples of each delay key (queue.go).
	queue   planQueue
	byKey   map[string][]*tupleState
	byTuple map[string]*tupleState // by the tuple's key
	closed  bool
	running int         // refreshes in flight, within concurrency
	timer   clock.Timer // wakes the loop when the next tuple is due
	// fallingBack: the units whose owner's rows did not come, since when.
	fallingBack map[string]time.Time
	// replanLater and replanPending: keys to place again once after a
	// batch of a peer's rows, or a burst of deltas (cluster.go).
	replanLater   map[string]bool
	replanPending map[string]bool
	digests       map[*config.Tuple]string // digestLocked
	refusedLogged map[string]bool          // refusal reasons logged (once each)
	shapes        map[decode.Shape]*decode.Shape
	// handled counts the wakes the loop has acted on; settled is
	// signalled when handled or running change (settle).
	handled uint64
	settled *sync.Cond
	// filled is closed once every tuple has had its first refresh;
	// unfilled counts those still waiting for it.
	filled   chan struct{}
	unfilled int
	// fill is the tuples never asked (fill.go); hold is a call held back:
	// no refresh starts until it ends; wait is what due tuples wait for.
	fill       fillState
	hold, wait waitState
	engine     atomic.Pointer[engineView] // the fill and the wait as published
	view       atomic.Pointer[apiView]    // what scrapes read, published under mu
	// lastScrape and scrapeGap (Unix and plain nanoseconds) say whether
	// anybody still scrapes.
	lastScrape, scrapeGap atomic.Int64
	wakes                 atomic.Uint64 // wakes asked: a scrape adds one without a lock
}

// apiView is the published list of an API's tuples, replaced whole by a
// reload; each tuple publishes its own tupleView.
type apiView struct {
	api     *config.API
	up      *upstream.Client
	tuples  []*tupleState          // read through their view only
	byTuple map[string]*tupleState // never written once published
	filled  chan struct{}
}

// refreshRun is what a refresh reads of the configuration, taken when it
// starts.
type refreshRun struct {
	tuple *config.Tuple
	api   *config.API
	up    *upstream.Client
	// turn is the turn of rate_limit taken for it: spent by its call, or
	// given back.
	turn *upstream.Turn
}

func newAPICollector(name string, e *Exporter, logger log.Logger) *apiCollector {
	ctx, cancel := context.WithCancel(context.Background())
	c := &apiCollector{name: name, m: e.m, bm: e.bm, clk: e.opts.Clock, logger: logger, idleAfter: e.opts.IdleAfter,
		peer: e.peer, rows: e.rows, cm: e.cm,
		ctx: ctx, cancel: cancel, wakeup: make(chan struct{}, 1), byKey: map[string][]*tupleState{}, fallingBack: map[string]time.Time{},
		refusedLogged: map[string]bool{},
		filled:        make(chan struct{})}
	c.settled = sync.NewCond(&c.mu)
	close(c.filled) // nothing to fill until reconcile brings tuples
	return c
}

// publishViewLocked publishes the list of tuples in force.
func (c *apiCollector) publishViewLocked() {
	c.view.Store(&apiView{api: c.api, up: c.up, tuples: c.states, byTuple: c.byTuple, filled: c.filled})
}

// Name is the API's name, as collect[] selects its engine.
func (c *apiCollector) Name() string { return c.name }

// Collect serves every tuple from what its engine published, without a
// call or a lock. Only the first fill at start is awaited, until ctx
// ends. fresh: every tuple's last refresh succeeded.
func (c *apiCollector) Collect(ctx context.Context) ([]exposition.Sample, bool) {
	v := c.view.Load()
	now := c.clk.Now()
	c.touch(now) // a read moves no plan
	timedOut := false
	select {
	case <-v.filled:
	case <-ctx.Done():
		timedOut = true
	}
	v = c.view.Load()
	now = c.clk.Now()
	var stale, due, unasked float64
	fresh := !timedOut
	out := make([]exposition.Sample, 0, 4*len(v.tuples))
	excess := excessTally{}
	rowsDue := dueTally{}
	var scratch []byte // a tuple's label set, rendered (tupleInfo.appendTo)
	for _, st := range v.tuples {
		tv := st.view.Load()
		if !tv.ok || !tv.attempted {
			fresh = false
			if showValues(tv.values, tv.ok, tv.failingSince.Time(), now, v.api.MaxStaleness) {
				stale++
			}
		}
		out = tv.emit(out, now, v.api.MaxStaleness, &scratch)
		excess.add(tv, now)
		rowsDue.add(tv)
		if !st.running.Load() && !tv.next.Time().After(now) {
			due++
		}
		if !tv.asked {
			unasked++
		}
	}
	name := c.name
	if c.bm != nil {
		c.bm.Observe(name, v.up.Budget(), now)
	}
	c.m.staleServed.WithLabelValues(name).Add(stale)
	c.m.due.WithLabelValues(name).Set(due)
	c.m.unasked.WithLabelValues(name).Set(unasked)
	c.m.rowDue.publish(name, rowsDue)
	for window, x := range excess {
		c.m.excess.WithLabelValues(name, window).Set(x.sum.Seconds() / float64(max(x.n, 1)))
	}
	return out, fresh
}

// excessTally sums, per window, how far each scheduled tuple's served row
// is behind the newest row published by the learned delay.
type excessTally map[string]*excessSum

type excessSum struct {
	sum time.Duration
	n   int
}

// add counts one tuple by schedule.Excess. Left out: series on a
// cache_ttl (no schedule), deprecated ones, those without a row yet.
func (x excessTally) add(tv *tupleView, now time.Time) {
	if tv.w <= 0 {
		return
	}
	s := x[tv.tuple.Window]
	if s == nil {
		s = &excessSum{}
		x[tv.tuple.Window] = s // the window's gauge is set, to 0 if none counts
	}
	if tv.newest == 0 || tv.deprecated {
		return
	}
	if e, counted := schedule.Excess(tv.newest.Time(), tv.w, tv.earliest, now); counted {
		s.n++
		s.sum += e
	}
}

// refresh calls upstream for one tuple, detached from any scrape, and
// hands the outcome to the door under the tuple's configuration when it
// ends (a reload may have changed or dropped it).
func (c *apiCollector) refresh(st *tupleState, r refreshRun) {
	defer c.wg.Done()
	ctx, cancel := context.WithTimeout(c.ctx, r.api.Timeout)
	defer cancel()

	start := c.clk.Now()
	d, err := c.fetch(upstream.WithTurn(ctx, r.turn), r.up, r.tuple, start)
	r.turn.Release()
	c.mu.Lock()
	st.inflight = false
	c.running--
	switch {
	case st.removed: // the outcome says nothing the engine keeps
	case c.ctx.Err() != nil:
		c.planLocked(st) // closing
		c.filledLocked(st)
	default:
		c.handleLocked(st, refreshEvent(start, d, err))
	}
	st.running.Store(false) // published by the outcome, if any
	c.wakes.Add(1)          // followers may be due, a slot is free
	c.settled.Broadcast()
	c.mu.Unlock()
	c.signal()
}

// refreshEvent is the event a refresh sent at start came to.
func refreshEvent(start time.Time, d *decode.Answer, err error) event {
	var de *decodeError
	switch e := upstream.AsErrorOrNil(err); {
	case errors.As(err, &de):
		return event{kind: evFailed, start: start, err: &upstream.Error{Code: "decode", Message: de.msg}, decodeFailed: true}
	case err == nil:
		return event{kind: evFetched, start: start, answer: d}
	case e.HeldBack:
		return event{kind: evHeld, start: start, err: e}
	case e.Refused:
		return event{kind: evRefused, start: start, err: e}
	default:
		return event{kind: evFailed, start: start, err: e}
	}
}

// fetch is one GET and decode of a tuple. Rows dated after now by more
// than a spacing are left out: a wrong clock upstream never becomes a plan.
func (c *apiCollector) fetch(ctx context.Context, up *upstream.Client, t *config.Tuple, now time.Time) (*decode.Answer, error) {
	endpoint := t.Path
	if t.Entry != nil {
		endpoint = t.Entry.Path
	}
	root, err := up.Fetch(upstream.WithEndpoint(ctx, endpoint), t.Path, t.Query().URL(), t.Keyed, decode.MaxRows)
	if err != nil {
		return nil, err
	}
	d, err := decode.LatestAt(root, t, up.DefaultRows(), now)
	if err != nil {
		return nil, &decodeError{up.Clean(err.Error())} // counted at the door
	}
	if d.HasShape {
		up.Shapes().Tuple(t, d.Shape)
	}
	return d, nil
}
