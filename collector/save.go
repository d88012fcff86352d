package collector

import (
	"time"

	"github.com/onchain-exporter/onchain_exporter/state"
)

// How the Exporter saves what a state.Store keeps; ApplyConfig takes it
// back at start.

// Save writes the state of every API to the Store, where it changed. It
// runs every few seconds and on Close; without a Store it does nothing.
// Each engine's lock is held only while its state is copied, never across
// the write: neither scrapes nor refreshes wait for the disk.
func (e *Exporter) Save() {
	if e.opts.Store == nil {
		return
	}
	e.opts.Store.LockSaves()
	defer e.opts.Store.UnlockSaves()
	for _, c := range *e.served.Load() {
		e.opts.Store.Write(c.name, e.snapshot(c))
	}
}

// snapshot builds the state.File of one engine.
func (e *Exporter) snapshot(c *apiCollector) *state.File {
	c.mu.Lock()
	up, book, states := c.up, c.sched.book, c.states
	id := up.Account()
	f := state.NewFile(c.name, id)
	for _, st := range states {
		f.Put(st.tuple, st.Tuple)
	}
	c.mu.Unlock()
	f.Delays, f.Pauses, f.Lists = book.Snapshot(), up.Pauses(), e.opts.Store.Lists(c.name, id)
	if b := up.Budget(); b != nil {
		saved := b.Saved(e.now())
		f.Budget = &saved
	}
	return f
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
