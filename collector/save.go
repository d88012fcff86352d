package collector

import (
	"time"

	"github.com/onchain-exporter/onchain_exporter/budget"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/schedule"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// Keeper keeps what the engines learned across restarts (package
// persist's Store): the engine gives snapshots and takes back what the
// door checked; the files are the Keeper's.
type Keeper interface {
	// Take hands back, once, what the last run left of an API section
	// for account, each tuple's entry checked by TakeSaved; nil when
	// there is nothing.
	Take(a *config.API, account string, now time.Time) *Saved
	// Save writes the snapshot of every API, one save at a time.
	Save([]Snapshot)
	// Keep makes a client's budget reserve its calls on disk and
	// restores its saved pauses (upstream.Pool.OnClient).
	Keep(*upstream.Client)
}

// Saved is what the last run left of an API section, checked.
type Saved struct {
	Tuples map[string]Tuple // by tuple key, of the same digest
	Delays map[string]schedule.Estimate
	Budget *budget.Saved
}

// Snapshot is one API's state for a save, each part its owner's.
type Snapshot struct {
	API, Account string
	Tuples       map[string]SavedTuple        // the engine's, by tuple key
	Delays       map[string]schedule.Estimate // schedule.Book.Snapshot
	Pauses       []upstream.Pause             // upstream.Client.Pauses
	Budget       *budget.Saved                // budget.Budget.Saved
}

// Save writes the state of every API to the Keeper, if any. An engine's
// lock is held only while its state is copied: nothing waits for the disk.
func (e *Exporter) Save() {
	if e.opts.Store == nil {
		return
	}
	e.saveMu.Lock() // an older snapshot is never written after a newer one
	defer e.saveMu.Unlock()
	var snaps []Snapshot
	for _, c := range *e.served.Load() {
		snaps = append(snaps, e.snapshot(c))
	}
	e.opts.Store.Save(snaps)
}

// snapshot takes the snapshot of each owner of one engine's state.
func (e *Exporter) snapshot(c *apiCollector) Snapshot {
	c.mu.Lock()
	up, book := c.up, c.sched.book
	snap := Snapshot{API: c.name, Account: up.Account(), Tuples: make(map[string]SavedTuple, len(c.states))}
	for _, st := range c.states {
		snap.Tuples[st.tuple.Key] = SaveTuple(st.tuple, st.Tuple)
	}
	c.mu.Unlock()
	snap.Delays, snap.Pauses = book.Snapshot(), up.Pauses()
	if b := up.Budget(); b != nil {
		saved := b.Saved(e.now())
		snap.Budget = &saved
	}
	return snap
}

// SaveTuple is the entry of tuple t in state s as a state file keeps it:
// under t's digest, the times JSON cannot hold forgotten.
func SaveTuple(t *config.Tuple, s Tuple) SavedTuple {
	s.forgetFarTimes()
	return SavedTuple{Digest: digest(t), State: s}
}

// saveLoop saves every Options.SaveInterval until stop is closed.
func (e *Exporter) saveLoop(stop <-chan struct{}) {
	t := time.NewTicker(e.opts.SaveInterval)
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
