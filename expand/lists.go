package expand

import (
	"fmt"
	"sync"
	"time"

	"github.com/go-kit/log/level"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// The listing endpoints' answers: read once per expansion, reused while
// recent, kept across restarts by the Store.

// cachedList is one answer in the Expander's cache, under listKey.
type cachedList struct {
	rows []map[string]any
	at   time.Time
	gen  int
	// saved: read from the state of the last run, not fetched by this
	// one; reused up to Refresh, as the last run would have.
	saved bool
}

// Store is what keeps the listing answers across restarts, and the
// pauses a list call must respect at start: a collector.Store, which
// writes them in each API's state file under --storage.path. Its methods
// accept a nil receiver, which keeps nothing.
type Store interface {
	// RestorePauses applies to a client, once, the pauses the last run
	// saved for its API, when the client is of the same account.
	RestorePauses(c *upstream.Client)
	// RecallList returns the saved answer of a listing endpoint of an
	// API section of the same account (upstream.Account).
	RecallList(a *config.API, path string) (rows []map[string]any, at time.Time, ok bool)
	// RememberList keeps the answer of a listing endpoint for the next
	// save.
	RememberList(a *config.API, path string, rows []map[string]any, at time.Time)
}

type listRequest struct {
	api   *config.API
	path  string
	keyed bool
}

// listResult is what one list gave: rows to resolve with (fresh, reused
// or the last good answer), and the error of the call when it failed.
type listResult struct {
	rows []map[string]any
	ok   bool
	err  error
}

// fetchAll reads every list needed, at the same time: at start the
// budget is short, and one slow API must not use it up for the others.
func (r *resolution) fetchAll() {
	keys := make([]string, 0, len(r.requests))
	for k := range r.requests {
		keys = append(keys, k)
	}
	results := make([]listResult, len(keys))
	var wg sync.WaitGroup
	for i, k := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = r.fetch(k, r.requests[k])
		}()
	}
	wg.Wait()
	for i, k := range keys {
		r.lists[k] = results[i]
	}
	for e, ks := range r.entryLists {
		for _, k := range ks {
			if !r.lists[k].ok {
				r.waiting[e] = true
			}
		}
	}
}

// fetch reads one list: reused while recent, through the API's client
// otherwise, the last good answer when that fails.
func (r *resolution) fetch(key string, req listRequest) listResult {
	x := r.x
	x.mu.Lock()
	c, cached := x.cache[key]
	if !cached {
		if rows, at, ok := x.recallList(req.api, req.path); ok {
			c, cached = cachedList{rows: rows, at: at, gen: x.gen, saved: true}, true
			x.cache[key] = c
		}
	}
	reuse := listReuse
	if c.saved {
		// A restart costs no list call the last run would not have made.
		reuse = Refresh
	}
	fresh := cached && c.gen == x.gen && x.now().Sub(c.at) < reuse
	gen := x.gen
	x.mu.Unlock()
	if fresh {
		return listResult{rows: c.rows, ok: true}
	}
	c0, release := x.clients.Candidate(req.api)
	defer release()
	if x.store != nil {
		x.store.RestorePauses(c0)
	}
	rows, err := c0.List(r.ctx, req.path, nil, req.keyed)
	if why := unusable(req.path, rows); err == nil && why != "" {
		err = c0.Fail(&upstream.Error{Code: "no_data", Message: req.path + ": " + why})
	}
	if err != nil {
		if !cached {
			return listResult{err: err}
		}
		level.Warn(x.logger).Log("msg", "listing endpoint failed; using its last good answer", "api", req.api.Name, "path", req.path,
			"age", x.now().Sub(c.at).Round(time.Second), "err", err)
		return listResult{rows: c.rows, ok: true, err: err}
	}
	x.mu.Lock()
	x.cache[key] = cachedList{rows: rows, at: x.now(), gen: gen}
	x.mu.Unlock()
	if x.store != nil {
		x.store.RememberList(req.api, req.path, rows, x.now())
	}
	return listResult{rows: rows, ok: true}
}

// recallList is the Store's saved answer of a listing endpoint.
func (x *Expander) recallList(a *config.API, path string) ([]map[string]any, time.Time, bool) {
	if x.store == nil {
		return nil, time.Time{}, false
	}
	return x.store.RecallList(a, path)
}

// rows returns the rows of a list read by fetchAll.
func (r *resolution) rows(a *config.API, path string) ([]map[string]any, error) {
	l, ok := r.lists[listKey(a, path)]
	if !ok || !l.ok {
		return nil, fmt.Errorf("%s was not read", path) // only waiting entries need unread lists
	}
	return l.rows, nil
}
