package collector

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// What a Store keeps, in the form it keeps it, and how the Exporter saves
// and restores it.

// sanitize keeps counters from a file within what the schedule indexes
// with.
func (c *tupleCache) sanitize() {
	c.Failures, c.Polls = max(c.Failures, 0), max(c.Polls, 0)
}

// plannedAhead is the furthest ahead a tuple's next refresh is ever
// planned (a window or two, a cache_ttl, a pause or hold of at most a
// day); a saved plan beyond it is not trusted.
func plannedAhead(t *config.Tuple) time.Duration {
	return max(2*config.WindowDuration(t.Window), time.Duration(t.CacheTTL*float64(time.Second)), upstream.MaxRestoredPause) + time.Minute
}

// tupleDigest is a digest of what makes a tuple's request and series:
// a saved cache applies to a tuple of the same digest only.
func tupleDigest(t *config.Tuple) string {
	b, _ := json.Marshal(struct {
		Key, Path, Window, Rows, TimeKey string
		Query                            map[string][]string
		Fields                           map[string]*config.Field
		AllNumeric, Keyed                bool
		LabelFields, Names, Values       []string
		CacheTTL                         float64
	}{t.Key, t.Path, t.Window, t.Rows, t.TimeKey, t.Query, t.Fields, t.AllNumeric, t.Keyed,
		t.LabelFields, t.LabelNames, t.LabelValues, t.CacheTTL})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12])
}

// tuple returns the saved cache of a tuple of the same digest.
func (f *stateFile) tuple(t *config.Tuple) (tupleCache, bool) {
	if f == nil {
		return tupleCache{}, false
	}
	s, ok := f.Tuples[t.Key]
	if !ok || s.Digest != tupleDigest(t) {
		return tupleCache{}, false
	}
	return s.State, true
}

// Save writes the state of every API to the Store, where it changed. It
// runs every few seconds and on Close; without a Store it does nothing.
func (e *Exporter) Save() {
	if e.opts.Store == nil {
		return
	}
	e.opts.Store.saving.Lock()
	defer e.opts.Store.saving.Unlock()
	e.mu.RLock()
	defer e.mu.RUnlock()
	e.saveLocked()
}

func (e *Exporter) saveLocked() {
	for _, c := range e.apis {
		id := c.up.Account()
		f := &stateFile{Version: stateVersion, API: c.api.Name, Account: id, Tuples: map[string]savedTuple{},
			Delays: c.sched.book.Snapshot(), Pauses: c.up.Pauses(), Lists: e.opts.Store.listsOf(c.api.Name, id)}
		if b := c.up.Budget(); b != nil {
			saved := b.Saved(e.opts.Now())
			f.Budget = &saved
		}
		c.mu.Lock()
		for _, st := range c.states {
			f.Tuples[st.tuple.Key] = savedTuple{Digest: tupleDigest(st.tuple), State: st.tupleCache}
		}
		c.mu.Unlock()
		e.opts.Store.write(c.api.Name, f)
	}
}

// saveLoop saves every interval until stop is closed.
func (e *Exporter) saveLoop(every time.Duration, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			e.Save()
		}
	}
}
