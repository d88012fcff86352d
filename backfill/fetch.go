package backfill

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/go-kit/log/level"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/decode"
	keyplan "github.com/onchain-exporter/onchain_exporter/plan"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// outcome is one series fetched: its samples spooled, or why not.
type outcome struct {
	t       *config.Tuple
	ts      *tupleSeries
	sp      *spool
	rec     seriesRecord
	spacing time.Duration // of its rows, for --sample-interval
	err     error
}

type errorKind int

const (
	refused  errorKind = iota + 1 // the upstream refuses the series as asked
	notTried                      // left for a later run
)

// tupleError is a series not written, and why.
type tupleError struct {
	kind errorKind
	err  error
}

func (e *tupleError) Error() string { return e.err.Error() }
func (e *tupleError) Unwrap() error { return e.err }

// maxRetries bounds the tries of a call that failed in a way that may
// pass (a server fault, a timeout), beyond the client's own one retry.
const maxRetries = 3

// history fetches every row of one series, newest page first, and
// spools its samples.
func (r *runner) history(ctx context.Context, t *config.Tuple) *outcome {
	oc := &outcome{t: t, ts: newTupleSeries(r.cfg, t, r.o.Labels, r.claims), sp: &spool{dir: r.o.TempDir}}
	if why := r.stoppedAPI(t.API); why != "" {
		oc.err = &tupleError{notTried, errors.New(why)}
		return oc
	}
	c := r.pool.Client(r.cfg.APIs[t.API])
	oc.spacing = keyplan.WindowDuration(t.Window)
	shift := r.o.Stamp.shift(t, oc.spacing)
	from, clamped, why := fromFor(t, r.kp, r.o.From, r.o.To.Add(-shift), r.o.Now())
	if why != nil {
		oc.err = &tupleError{refused, why}
		return oc
	}
	if clamped {
		r.clamped(t, from)
	}
	p := pagingFor(t, from, r.o.To.Add(-shift))
	limit := p.limit
	var before *cursor
	for {
		q := p.query(t, limit, before)
		root, err := r.call(ctx, c, t, q, limit, &oc.rec)
		if e := upstream.AsErrorOrNil(err); e != nil && e.TooLarge && limit > 1 {
			limit /= 2
			level.Info(r.o.Logger).Log("msg", "answer too large to read; asking for fewer rows", "endpoint", t.Path, "limit", limit)
			continue
		}
		if err != nil {
			oc.err = err
			return oc
		}
		// Whether the page is full and where the next one starts are read
		// before the rows: the parsed answer is not needed while they are
		// spooled, and the garbage collector may take it.
		list := pageRows(root, t, c.DefaultRows())
		n := len(list)
		full := limit > 0 && n >= limit
		var oldest, newest cursor
		dated := false
		if full {
			oldest, newest, dated = pageBounds(list, t)
		}
		if full && dated && before != nil && !movesBack(*before, oldest, newest) {
			// An upstream that does not take to= as asked would have the
			// run page a row at a time: stop at once.
			oc.err = fmt.Errorf("the upstream answered %d rows from %s to %s when asked for those before %s: a page must move back by at least its own length (to= not taken as asked?); the series is not written",
				n, oldest, newest, before)
			return oc
		}
		rows, problems, err := decode.History(root, t, c.DefaultRows())
		if err != nil {
			oc.err = &tupleError{refused, fmt.Errorf("the answer cannot be read: %w", err)}
			return oc
		}
		oc.ts.problems = append(oc.ts.problems, problems...)
		if oc.spacing == 0 {
			oc.spacing = spacingOf(rows)
			shift = r.o.Stamp.shift(t, oc.spacing)
		}
		oc.sp.page()
		for _, row := range rows {
			at := row.Time.Add(shift)
			if before != nil && !before.older(row) || row.Time.Before(from) || at.After(r.o.To) {
				continue
			}
			if err := oc.ts.rowSamples(oc.sp, row, at.UnixMilli()); err != nil {
				oc.err = err
				return oc
			}
			oc.rec.Rows++
			if oc.rec.Oldest.IsZero() || row.Time.Before(oc.rec.Oldest) {
				oc.rec.Oldest = row.Time
			}
			if row.Time.After(oc.rec.Newest) {
				oc.rec.Newest = row.Time
			}
		}
		switch {
		case !full || !dated || !oldest.time.After(from):
			return oc
		case !p.ranged:
			level.Info(r.o.Logger).Log("msg", "the API serves only the newest rows of this series; older history is not available",
				"endpoint", t.Path, "rows", n, "oldest", oldest.time.Format(time.DateOnly))
			return oc
		}
		before = &oldest
	}
}

// older says whether a row is older than the cursor: by block height
// where both have one, else by time.
func (c *cursor) older(row decode.Row) bool {
	if c.hasBlock && row.HasBlock {
		return row.Block < c.block
	}
	return row.Time.Before(c.time)
}

// pageRows are the rows of an answer, those without values too: a page
// of nulls is still a page. Their number says whether the answer is full.
func pageRows(root any, t *config.Tuple, defaultRows string) []any {
	pinned := ""
	if t.Entry != nil {
		pinned = t.Entry.Rows
	}
	list, _, err := decode.FindRows(root, pinned, t.Rows(), defaultRows)
	if err != nil {
		return nil
	}
	return list
}

// pageBounds are the oldest and newest dated rows of a full page: the
// oldest is where the next page starts. Read only for full pages.
func pageBounds(list []any, t *config.Tuple) (oldest, newest cursor, dated bool) {
	pinned := ""
	if t.Entry != nil {
		pinned = t.Entry.TimeKey
	}
	for _, item := range list {
		obj, ok := item.(map[string]any)
		if !ok {
			continue
		}
		_, tm, ok := decode.FindTimeKey(obj, pinned, t.TimeKey())
		if !ok {
			continue
		}
		c := cursor{time: tm}
		if b, ok := decode.Number(obj["blockheight"]); ok {
			c.block, c.hasBlock = b, true
		}
		if !dated || tm.Before(oldest.time) {
			oldest = c
		}
		if !dated || tm.After(newest.time) {
			newest = c
		}
		dated = true
	}
	return oldest, newest, dated
}

// movesBack says whether a page of rows from oldest to newest, asked for
// the rows before prev, moves back by at least its own length; block
// heights are compared where all three have one, else times.
func movesBack(prev, oldest, newest cursor) bool {
	if prev.hasBlock && oldest.hasBlock && newest.hasBlock {
		return oldest.block < prev.block && newest.block <= prev.block
	}
	return oldest.time.Before(prev.time) && !newest.time.After(prev.time)
}

// String is the cursor as messages show it.
func (c cursor) String() string {
	s := c.time.UTC().Format(time.RFC3339)
	if c.hasBlock {
		s += fmt.Sprintf(" (block %.0f)", c.block)
	}
	return s
}

// call makes one call of a series' history, waiting out rate_limit, the
// daily budget's pace and short pauses, and retrying faults that may pass.
// The error is a *tupleError, or the context's.
func (r *runner) call(ctx context.Context, c *upstream.Client, t *config.Tuple, q url.Values, maxItems int, rec *seriesRecord) (any, error) {
	retries := 0
	for {
		cctx, cancel := context.WithTimeout(ctx, r.o.Timeout)
		root, err := c.Fetch(cctx, t.Path, q, t.Keyed, maxItems)
		cancel()
		if err == nil {
			r.reached(t.API)
			r.calls.Add(1)
			rec.Calls++
			if ctx.Err() != nil {
				// Answered while the run was being interrupted: whether
				// the answer or the interrupt reaches the client first is
				// chance, so the answer is dropped, as a cut call's is,
				// and the series is left for a later run.
				return nil, ctx.Err()
			}
			return root, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		e := upstream.AsError(err)
		if !e.HeldBack && e.Code != "paused" {
			r.calls.Add(1)
			rec.Calls++
		}
		switch {
		case e.HTTP != 0:
			r.reached(t.API)
		case belowHTTP(e) && r.notReached(t.API, e):
			return nil, &tupleError{notTried, e}
		}
		if why := r.stoppedAPI(t.API); why != "" {
			// Stopped meanwhile, by another series' call.
			return nil, &tupleError{notTried, errors.New(why)}
		}
		var wait time.Duration
		switch {
		case e.HeldBack && e.RetryAfter > r.o.MaxWait:
			// The daily budget (or rate_limit) has no call for it before
			// later than the run waits.
			r.stop(t.API, fmt.Sprintf("%s: no call before %s; run again then", e.Message, r.o.Now().Add(e.RetryAfter).UTC().Format(time.RFC3339)))
			return nil, &tupleError{notTried, e}
		case e.HeldBack:
			wait = e.RetryAfter
		case e.TooLarge:
			return nil, e
		case e.Gone:
			return nil, &tupleError{refused, e}
		case e.Credential:
			r.stop(t.API, e.Error())
			return nil, &tupleError{notTried, e}
		case e.Code == "paused" || e.Pause > 0 || !e.PauseUntil.IsZero():
			until := e.PauseUntil
			if until.IsZero() {
				until = r.o.Now().Add(max(e.Pause, e.RetryAfter))
			}
			if wait = until.Sub(r.o.Now()); wait > r.o.MaxWait {
				r.stop(t.API, fmt.Sprintf("%v; calls paused until %s", e, until.UTC().Format(time.RFC3339)))
				return nil, &tupleError{notTried, e}
			}
		case e.Retryable && retries < maxRetries:
			retries++
			wait = max(e.RetryAfter, time.Duration(retries)*2*time.Second)
			if belowHTTP(e) {
				// Told out of reach after maxBelowHTTPInARow: soon.
				wait = time.Duration(retries) * time.Second
			}
		default:
			return nil, e
		}
		level.Debug(r.o.Logger).Log("msg", "waiting before calling again", "endpoint", t.Path, "wait", wait, "err", e)
		if err := r.wait(ctx, t.API, max(wait, 10*time.Millisecond)); err != nil {
			return nil, err
		}
	}
}

// maxBelowHTTPInARow stops the calls of an API after this many in a row
// failed before any answer (a name that does not resolve, a refused or
// reset connection, a timeout): the upstream cannot be reached, and every
// other series would wait out the same retries. With the run's default
// concurrency that is two tries of the first two series, a few seconds.
const maxBelowHTTPInARow = 4

// belowHTTP says a call failed before the upstream answered.
func belowHTTP(e *upstream.Error) bool {
	return e.HTTP == 0 && !e.HeldBack && (e.Code == "transport" || e.Code == "timeout")
}

// reached notes that the upstream of an API answered a call.
func (r *runner) reached(api string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.inARow[api] = 0
}

// notReached counts a call of an API that failed below HTTP; once
// maxBelowHTTPInARow did in a row it stops the API, and the run ends
// with an error naming the API's URL (credentials never are in it). It
// says whether the API is stopped.
func (r *runner) notReached(api string, e *upstream.Error) bool {
	r.mu.Lock()
	r.inARow[api]++
	n := r.inARow[api]
	if n >= maxBelowHTTPInARow && r.unreachable[api] == nil {
		base := ""
		if a := r.cfg.APIs[api]; a != nil && a.URL != nil {
			base = upstream.ShownURL(a.URL)
		}
		hint := "check the section's url, the network and any proxy, then run again"
		if e.Code == "timeout" {
			hint = "check the section's url, the network and any proxy, or give calls longer (--upstream.timeout), then run again"
		}
		r.unreachable[api] = fmt.Errorf("the %s API's upstream %s cannot be reached: %d calls in a row failed before any answer, the last with %s: %s; %s",
			api, base, n, e.Code, e.Message, hint)
	}
	err := r.unreachable[api]
	r.mu.Unlock()
	if err != nil {
		r.stop(api, err.Error())
		return true
	}
	return false
}

// clamped counts a series whose history starts after --from, where the
// key's plan reads its window from, and says so once per path and window.
func (r *runner) clamped(t *config.Tuple, from time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sum.Clamped++
	key := t.Path + " " + t.Window
	if r.saidClamp[key] {
		return
	}
	r.saidClamp[key] = true
	level.Info(r.o.Logger).Log("msg", "the key's plan reads this history from a later time than --from: the series start there", "endpoint", t.Path, "window", t.Window,
		"why", clampNote(t, r.kp, from))
}
