package expand

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/go-kit/log/level"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// listRequest is a listing call an expansion needs.
type listRequest struct {
	api   *config.API
	path  string
	keyed bool
}

// listResult is what one list gave: rows to resolve with (fresh, reused
// or the last good answer), and the error of the call if it failed.
type listResult struct {
	rows []map[string]any
	ok   bool
	err  error
}

// fetchAll reads every list needed at the same time: at start the budget
// is short, and one slow API must not use it up for the others.
func (r *resolution) fetchAll() {
	keys := slices.Collect(maps.Keys(r.requests))
	results := make([]listResult, len(keys))
	var wg sync.WaitGroup
	for i, k := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = r.fetch(r.requests[k])
		}()
	}
	wg.Wait()
	for i, k := range keys {
		r.lists[k] = results[i]
	}
	r.markWaiting()
}

// markWaiting leaves out the entries a list they need was not read for.
func (r *resolution) markWaiting() {
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
func (r *resolution) fetch(req listRequest) listResult {
	x := r.x
	c, cached, gen := x.cache.lookup(req.api, req.path)
	reuse := listReuse
	if c.saved {
		reuse = Refresh // a restart makes no call the last run would not have
	}
	if cached && c.gen == gen && x.now().Sub(c.at) < reuse {
		return listResult{rows: c.rows, ok: true}
	}
	c0, release := x.clients.Candidate(req.api)
	defer release()
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
	x.cache.put(req.api, req.path, rows, x.now(), gen)
	return listResult{rows: rows, ok: true}
}

// rows returns the rows of a list read by fetchAll.
func (r *resolution) rows(a *config.API, path string) ([]map[string]any, error) {
	l, ok := r.lists[listKey(a, path)]
	if !ok || !l.ok {
		return nil, fmt.Errorf("%s was not read", path) // only waiting entries need unread lists
	}
	return l.rows, nil
}
