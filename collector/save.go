package collector

import (
	"time"

	"github.com/onchain-exporter/onchain_exporter/state"
)

// How the Exporter saves what a state.Store keeps; ApplyConfig takes it
// back at start.

// Save writes the state of every API to the Store, where it changed. It
// runs every few seconds and on Close; without a Store it does nothing.
func (e *Exporter) Save() {
	if e.opts.Store == nil {
		return
	}
	e.opts.Store.LockSaves()
	defer e.opts.Store.UnlockSaves()
	e.mu.RLock()
	defer e.mu.RUnlock()
	e.saveLocked()
}

// saveLocked builds each API's state.File from its collector and writes
// it; the caller holds the Store's save lock and e.mu.
func (e *Exporter) saveLocked() {
	for _, c := range e.apis {
		id := c.up.Account()
		f := state.NewFile(c.api.Name, id)
		f.Delays, f.Pauses, f.Lists = c.sched.book.Snapshot(), c.up.Pauses(), e.opts.Store.Lists(c.api.Name, id)
		if b := c.up.Budget(); b != nil {
			saved := b.Saved(e.opts.Now())
			f.Budget = &saved
		}
		c.mu.Lock()
		for _, st := range c.states {
			f.Put(st.tuple, st.Tuple)
		}
		c.mu.Unlock()
		e.opts.Store.Write(c.api.Name, f)
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
