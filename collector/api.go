package collector

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"

	"github.com/onchain-exporter/onchain_exporter/budget"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/decode"
	"github.com/onchain-exporter/onchain_exporter/schedule"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// apiCollector serves the tuples of one API from their cache entries,
// refreshing those that are due.
type apiCollector struct {
	api    *config.API
	up     *upstream.Client
	sched  *apiSchedule
	fams   *families
	tf     *tupleFamilies
	m      *selfMetrics
	bm     *budget.Metrics
	now    func() time.Time
	logger log.Logger

	ctx    context.Context // parent of every refresh; cancelled on close
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// manual: the clock is simulated (tests, benchmarks) and there is no
	// background loop; step runs what is due.
	manual bool
	// idleAfter is how long without a scrape the engine waits before it
	// stops calling upstream (demand).
	idleAfter time.Duration
	wakeup    chan struct{} // a refresh ended, a scrape came: plan again
	loopDone  chan struct{}

	mu     sync.Mutex // guards every tupleState of this API and what follows
	states []*tupleState
	// queue holds the tuples not in flight by when each is due; byKey the
	// tuples of each delay key (queue.go).
	queue  planQueue
	byKey  map[string][]*tupleState
	closed bool
	// running counts the refreshes in flight, within the API's
	// concurrency.
	running int
	// lastScrape and scrapeGap say whether anybody still scrapes.
	lastScrape time.Time
	scrapeGap  time.Duration
	// filled is closed once every tuple has had its first refresh;
	// unfilled counts those still waiting for it.
	filled   chan struct{}
	unfilled int
}

// collect serves every tuple from what its last refresh left, without
// starting or waiting for a call: refreshes are the engine's (engine.go).
// Only the very first fill of tuples that have never been asked (after
// start, or new in a reload) is awaited, until ctx ends. It reports
// whether every tuple was served fresh: its last refresh succeeded and its
// first one has ended.
func (c *apiCollector) collect(ctx context.Context) ([]sampleOf, bool) {
	now := c.now()
	var hits, joined, stale float64
	c.mu.Lock()
	for _, st := range c.states {
		// A read: no plan is moved here (the engine's queue does).
		switch {
		case st.inflight != nil:
			joined++
		case now.Before(st.Next):
			hits++
		}
	}
	filled := c.filled
	c.mu.Unlock()
	c.touch(now)
	waits := []<-chan struct{}{filled}
	if c.manual {
		// A simulated clock: the scrape runs what is due, as the loop
		// would have, and waits for it within its deadline.
		waits = append(waits, c.dispatchAll(now)...)
	}
	timedOut := false
	for _, w := range waits {
		select {
		case <-w:
		case <-ctx.Done():
			timedOut = true
		}
		if timedOut {
			break
		}
	}
	now = c.now()
	fresh := !timedOut
	out := make([]sampleOf, 0, 4*len(c.states))
	excess := excessTally{}
	c.mu.Lock()
	for _, st := range c.states {
		if !st.OK || st.LastAttempt.IsZero() || st.inflight != nil && c.manual {
			fresh = false
			if st.showValues(now, c.api.MaxStaleness) {
				stale++
			}
		}
		out = st.emit(out, now, c.api.MaxStaleness)
		excess.add(c.sched.book, st, now)
	}
	c.mu.Unlock()
	name := c.api.Name
	if c.bm != nil {
		c.bm.Observe(name, c.up.Budget(), now)
	}
	c.m.cacheHits.WithLabelValues(name).Add(hits)
	c.m.cacheMisses.WithLabelValues(name).Add(float64(len(c.states)) - hits)
	c.m.callsSaved.WithLabelValues(name).Add(hits + joined)
	c.m.staleServed.WithLabelValues(name).Add(stale)
	for window, x := range excess {
		c.m.excess.WithLabelValues(name, window).Set(x.sum.Seconds() / float64(max(x.n, 1)))
	}
	return out, fresh
}

// excessTally sums, per window, how far each scheduled tuple's served row
// is behind the newest row published by the learned delay.
type excessTally map[string]*struct {
	sum time.Duration
	n   int
}

// add counts one tuple. A series is one row behind once now is past the
// start of the row after the one it serves plus the offset at which rows
// appear. Left out: series on a cache_ttl (no schedule), deprecated ones,
// and those that would be two rows or more behind: the tally is taken
// after the scrape's refreshes, so such a series was just asked and the
// upstream did not have the rows (it stopped, or publishes far later than
// learned); the exporter cannot tell a row it misses from one that does
// not exist.
func (x excessTally) add(b *schedule.Book, st *tupleState, now time.Time) {
	t := st.tuple
	w := rowWindow(st)
	if w <= 0 || t.CacheTTL > 0 {
		return
	}
	s := x[t.Window]
	if s == nil {
		s = &struct {
			sum time.Duration
			n   int
		}{}
		x[t.Window] = s // the window's gauge is set, to 0 if none counts
	}
	if st.Newest.IsZero() || st.Deprecated {
		return
	}
	behind := now.Sub(st.Newest.Add(b.Earliest(st.delayKey(), t.Key, w))) // the newest row fetched
	if behind >= 2*w {
		return
	}
	s.n++
	if behind >= w {
		s.sum += w
	}
}

// refresh calls upstream for one tuple and stores the outcome. It runs
// detached from the scrape that started it, bounded by the API timeout, so
// that a scrape that gives up does not waste a call others are waiting on.
func (c *apiCollector) refresh(st *tupleState, done chan struct{}) {
	defer c.wg.Done()
	defer c.wake() // the plan changed: followers may be due, a slot is free
	ctx, cancel := context.WithTimeout(c.ctx, c.api.Timeout)
	defer cancel()
	t := st.tuple // set once; the state's fields are the lock's

	start := c.now()
	d, err := c.fetch(ctx, t)
	var values []sampleOf
	var problems []string
	if err == nil {
		var conflicts []string
		values, conflicts = c.fams.build(t, d.Samples)
		problems = append(append(problems, d.Problems...), conflicts...)
		switch {
		case len(values) == 0 && len(problems) > 0:
			// Rows were there, their values were not numbers or could
			// not become series (a family another tuple owns): say so.
			msg := problems[0]
			if n := len(problems); n > 1 {
				msg += " (and " + strconv.Itoa(n-1) + " more)"
			}
			code := "bad_value"
			if len(d.Problems) == 0 {
				// Every value was good: they are another series' family
				// (a field renamed onto a name another concept has).
				code = "family_conflict"
			}
			err = c.up.Fail(&upstream.Error{Code: code, Message: msg})
		case len(values) == 0:
			err = c.up.Fail(&upstream.Error{Code: "no_data", Message: "the answer holds no value for any field"})
		}
	}
	now := c.now()
	c.mu.Lock()
	if c.ctx.Err() != nil {
		// Closing (reload or shutdown): the outcome says nothing about
		// the upstream; keep the state as it was.
		st.inflight = nil
		c.running--
		c.planLocked(st)
		close(done)
		c.mu.Unlock()
		return
	}
	siblings := false // the refresh found what its key's other tuples wait for
	defer func() {
		st.buildInfo(c.tf)
		st.inflight = nil
		c.running--
		if siblings {
			c.replanKeyLocked(st.delayKey()) // st, and its key's followers
		} else {
			c.planLocked(st)
		}
		if st.first {
			st.first = false
			c.unfilled--
			if c.unfilled == 0 {
				close(c.filled)
			}
		}
		close(done)
		c.mu.Unlock()
	}()
	if e := upstream.AsErrorOrNil(err); e != nil && e.HeldBack && e.Code == "budget_exhausted" {
		// Not sent: the daily budget has no call for it now. Nothing
		// failed and nothing was tried: the last good value stays
		// served as it was (max_staleness does not run), and the tuple
		// is asked again when the budget has a call.
		st.Next = c.sched.afterError(st, e, now)
		c.logOnce(st, level.Debug(c.logger), "refresh held back by daily_budget", e.Error())
		return
	}
	st.LastAttempt = start
	if err != nil {
		e := upstream.AsError(err)
		st.OK, st.LastCode = false, e.Code
		st.Failures++
		if st.FailingSince.IsZero() {
			st.FailingSince = start
		}
		st.Next = c.sched.afterError(st, e, now)
		if e.Gone {
			// The upstream says the series does not exist as asked:
			// there is no last good value to keep serving.
			st.values, st.Samples = nil, nil
			c.logOnce(st, level.Warn(c.logger), "refresh failed; the series is dropped until the request is fixed", e.Error())
			return
		}
		switch {
		case st.values == nil:
			c.logOnce(st, level.Warn(c.logger), "refresh failed; the series has no value yet and is not served", e.Error())
		case st.showValues(now, c.api.MaxStaleness):
			c.logOnce(st, level.Warn(c.logger), "refresh failed; serving the last good value until max_staleness", e.Error())
		default:
			c.logOnce(st, level.Warn(c.logger), "refresh failed; the last good value is older than max_staleness and is no longer served", e.Error())
		}
		return
	}
	prevNewest := st.Newest
	st.values, st.Samples, st.RowTime, st.Interval = values, d.Samples, d.RowTime, d.Interval
	if d.Newest.After(st.Newest) || st.Newest.IsZero() {
		st.Newest = d.Newest
	}
	st.Block = nil
	if d.HasBlock {
		st.Block = &d.Block
	}
	st.OK, st.LastCode, st.Failures = true, "", 0
	st.LastSuccess, st.FailingSince = now, time.Time{}
	st.logged = ""
	if d.Deprecated != st.Deprecated || (d.Deprecated && !st.deprecatedLog) {
		st.Deprecated = d.Deprecated
		if d.Deprecated && !st.deprecatedLog {
			st.deprecatedLog = true
			level.Warn(c.logger).Log("msg", "upstream marks this series deprecated; its data may no longer update", "endpoint", t.Path, "query", redactedQuery(t.Query))
		}
	}
	st.Next, siblings = c.sched.afterSuccess(st, prevNewest, now)
	if w := rowWindow(st); w > 0 && st.Newest.After(prevNewest) && t.CacheTTL == 0 {
		if !prevNewest.IsZero() {
			c.m.rowDelay.WithLabelValues(c.api.Name, t.Window).Observe(now.Sub(st.Newest.Add(w)).Seconds())
		}
		c.m.pubDelay.WithLabelValues(c.api.Name, t.Path, t.Window).Set(c.sched.book.Publication(delayKey(t), w).Seconds())
	}
	if len(problems) > 0 {
		c.up.CountErrors("bad_value", len(problems))
		c.logOnce(st, level.Warn(c.logger), "some fields of the answer were skipped", strings.Join(problems, "; "))
	} else if d != nil && d.Over != "" {
		c.logOnce(st, level.Warn(c.logger), "the upstream sent more series than the entry's limit; the rest are not served", d.Over)
	} else if d != nil && d.Page != "" {
		c.logOnce(st, level.Warn(c.logger), "the items counted are one page of more; the counts are of that page", d.Page)
	}
}

// fetch is one GET and decode of a tuple.
func (c *apiCollector) fetch(ctx context.Context, t *config.Tuple) (*decode.Answer, error) {
	endpoint := t.Path
	if t.Entry != nil {
		endpoint = t.Entry.Path
	}
	root, err := c.up.Fetch(upstream.WithEndpoint(ctx, endpoint), t.Path, t.Query, t.Keyed, maxRows)
	if err != nil {
		return nil, err
	}
	d, err := decode.Latest(root, t, c.up.DefaultRows())
	if err != nil {
		return nil, c.up.Fail(&upstream.Error{Code: "decode", Message: err.Error()})
	}
	if d.HasShape {
		c.up.Shapes().Tuple(t, d.Shape)
	}
	return d, nil
}

// maxRows is the most items an answer's arrays are read with: the
// exporter asks for a few rows (limit), so an answer of a hundred thousand
// costs what this many do.
const maxRows = 1000

// logOnce logs an error the first time it is seen for a tuple with that
// message; the same again is logged at debug level only.
func (c *apiCollector) logOnce(st *tupleState, l log.Logger, msg, err string) {
	// The message counts too: the same error that now ends the serving of
	// the last good value must say so at the level it was first said.
	if st.logged == msg+"\x00"+err {
		l = level.Debug(c.logger)
	}
	st.logged = msg + "\x00" + err
	l.Log("msg", msg, "endpoint", st.tuple.Path, "query", redactedQuery(st.tuple.Query), "err", err)
}

// close stops the engine and the refreshes under way, and waits for them.
func (c *apiCollector) close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.cancel()
	if c.loopDone != nil {
		<-c.loopDone
	}
	c.wg.Wait()
	c.mu.Lock()
	if c.unfilled > 0 {
		c.unfilled = 0
		close(c.filled) // nobody fills them now: scrapes go on
	}
	c.mu.Unlock()
}

// redactedQuery renders a query for logs; the credential is never in a
// tuple's query, but a value named like one is masked all the same.
func redactedQuery(q url.Values) string {
	out := url.Values{}
	for k, v := range q {
		if k == "api_key" || strings.Contains(strings.ToLower(k), "token") && k != "token" {
			out[k] = []string{"<redacted>"}
			continue
		}
		out[k] = v
	}
	return out.Encode()
}
