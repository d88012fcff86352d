package collector

import (
	"time"
)

// How the Exporter saves what its Store keeps; ApplyConfig takes it back
// at start.

// Save writes the state of every API to the Store, where it changed. It
// runs every few seconds and on Close; without a Store it does nothing.
// Each engine's lock is held only while its state is copied, never across
// the write: neither scrapes nor refreshes wait for the disk.
func (e *Exporter) Save() {
	s := e.opts.Store
	if s == nil {
		return
	}
	s.files.LockSaves()
	defer s.files.UnlockSaves()
	for _, c := range *e.served.Load() {
		s.write(e.snapshot(c))
	}
}

// snapshot takes the snapshot of each owner of one engine's state.
func (e *Exporter) snapshot(c *apiCollector) *apiSnapshot {
	c.mu.Lock()
	up, book := c.up, c.sched.book
	snap := &apiSnapshot{api: c.name, account: up.Account(), tuples: make(map[string]savedTuple, len(c.states))}
	for _, st := range c.states {
		snap.tuples[st.tuple.Key] = savedTuple{Digest: digest(st.tuple), State: st.Tuple}
	}
	c.mu.Unlock()
	snap.delays, snap.pauses, snap.lists = book.Snapshot(), up.Pauses(), e.opts.Store.cache.Saved(c.name, snap.account)
	if b := up.Budget(); b != nil {
		saved := b.Saved(e.now())
		snap.budget = &saved
	}
	return snap
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
