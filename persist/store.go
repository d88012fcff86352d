// Package persist keeps what the exporter learned across restarts, in the
// state files of --storage.path (package state, which stores plain data):
// it is the one place persistence is wired, outside the refresh engine.
// Each owner gives a snapshot of its own type and takes one back, checked:
//
//   - a tuple: collector.Tuple, under its digest (collector.SavedTuple),
//     checked by the engine's door (collector.TakeSaved) as it is read;
//   - the learned delays: schedule.Book's Snapshot and Restore, each
//     estimate checked by schedule.Estimate.Check;
//   - the pauses: upstream.Client's Pauses and RestorePauses;
//   - the listing answers: expand.Cache's Saved and Restore, which Store
//     holds for the Expander (expand.Store);
//   - the day's count: budget.Budget's Saved and Restore, in the state
//     file and, reserved before each chunk of calls leaves, in the
//     reservation file (Keep).
//
// The Store is the engine's collector.Keeper, and it keeps every client
// the pool of upstream clients puts in force (upstream.Pool.OnClient
// with Keep): a client's budget and pauses are hooked up in that one
// place, at the start, at a reload and for the listing calls alike.
package persist

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"

	"github.com/onchain-exporter/onchain_exporter/budget"
	"github.com/onchain-exporter/onchain_exporter/collector"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/decode"
	"github.com/onchain-exporter/onchain_exporter/expand"
	"github.com/onchain-exporter/onchain_exporter/internal/clock"
	"github.com/onchain-exporter/onchain_exporter/schedule"
	"github.com/onchain-exporter/onchain_exporter/state"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// Store joins the state files to the owners of what they hold. A nil
// *Store keeps nothing.
type Store struct {
	files  *state.Store
	logger log.Logger
	now    func() time.Time
	// cache holds the listing answers: those of the files at open, then
	// what expansion reads; saves write from it.
	cache *expand.Cache

	mu   sync.Mutex
	kept map[string]*budget.Budget // the budgets that reserve in the files
}

var _ collector.Keeper = (*Store)(nil)

// Open takes dir for this process and reads the state files of the API
// sections cfg configures, each bounded by how many tuples its section
// may hold (state.Open). An empty dir returns nil: nothing is kept.
func Open(dir string, cfg *config.Config, logger log.Logger) (*Store, error) {
	apis := map[string]int{}
	for name, a := range cfg.APIs {
		apis[name] = max(a.MaxTuples, len(a.Tuples))
	}
	files, err := state.Open(dir, apis, logger)
	if err != nil || files == nil {
		return nil, err
	}
	return New(files, logger), nil
}

// New keeps state in files, and hands the listing answers they hold to
// its Cache at once, for the first expansion. Nil files: nil.
func New(files *state.Store, logger log.Logger) *Store {
	if files == nil {
		return nil
	}
	s := &Store{files: files, logger: logger, now: time.Now, cache: expand.NewCache(), kept: map[string]*budget.Budget{}}
	for _, name := range config.APINames {
		account, raw := files.Lists(name)
		if raw == nil {
			continue
		}
		lists, bad := takeLists(raw, s.now())
		files.Dropped(name, bad)
		s.cache.Restore(name, account, lists)
	}
	return s
}

// Close releases the storage directory.
func (s *Store) Close() error {
	if s == nil {
		return nil
	}
	return s.files.Close()
}

// Cache returns the cache of listing answers the Store saves, for the
// Expander (expand.Store); nil for a nil Store.
func (s *Store) Cache() *expand.Cache {
	if s == nil {
		return nil
	}
	return s.cache
}

// Keep makes a client put in force keep its account's state across
// restarts (upstream.Pool.OnClient): the pauses saved for its API and
// account, once, and the reservation of its daily budget (keepBudget).
func (s *Store) Keep(c *upstream.Client) {
	if s == nil {
		return
	}
	s.restorePauses(c)
	s.keepBudget(c.API().Name, c.Account(), c.Budget())
}

// restorePauses applies the saved pauses of a client's API, once, when
// the client is of the account they were saved for.
func (s *Store) restorePauses(c *upstream.Client) {
	raw := s.files.Pauses(c.API().Name, c.Account())
	if raw == nil {
		return
	}
	var ps []upstream.Pause
	if err := json.Unmarshal(raw, &ps); err != nil {
		s.files.Dropped(c.API().Name, []state.Problem{{Entry: "pauses", Err: decode.ShortJSONError(err)}})
		return
	}
	c.RestorePauses(ps) // bounded there (upstream.MaxRestoredPause)
}

// keepBudget makes b, the daily budget of API api for account
// (upstream.Account), survive any crash: it restores what the API's
// reservation file says was reserved today (when it was written for the
// same account), then makes b write each chunk of calls there before the
// calls leave (budget.SetReserver, state.Store.Reserve). For a budget it
// already keeps (a client rebuilt for the same account carries its
// budget over), it does nothing. A Store whose directory cannot be
// written keeps nothing (the start warned).
func (s *Store) keepBudget(api, account string, b *budget.Budget) {
	if !s.files.Keeps() || b == nil {
		return
	}
	s.mu.Lock()
	if s.kept[api] == b {
		s.mu.Unlock()
		return
	}
	s.kept[api] = b
	s.mu.Unlock()
	if raw := s.files.TakeReservation(api, account); raw != nil {
		var v budget.Saved
		err := json.Unmarshal(raw, &v)
		if err == nil {
			err = b.Restore(v, s.now()) // checked there
		}
		if err != nil {
			s.files.ReservationIgnored(api, err)
		}
	}
	b.SetReserver(func(v budget.Saved) error {
		data, err := json.Marshal(v)
		if err != nil {
			return err
		}
		return s.files.Reserve(api, account, data)
	})
}

// Take hands back the state file of an API section once (nil when there
// is none): only the entries of its tuples, each checked against its
// tuple at now by the engine's door (collector.TakeSaved); an entry that
// is not what the exporter writes is dropped with a warning naming the
// file and the entry.
func (s *Store) Take(a *config.API, account string, now time.Time) *collector.Saved {
	if s == nil {
		return nil
	}
	tuples := make(map[string]*config.Tuple, len(a.Tuples))
	for _, t := range a.Tuples {
		tuples[t.Key] = t
	}
	f := s.files.Take(a.Name, account, func(key string) bool { return tuples[key] != nil })
	if f == nil {
		return nil
	}
	out := &collector.Saved{Tuples: make(map[string]collector.Tuple, len(f.Tuples))}
	var bad []state.Problem
	drop := func(entry string, err string) { bad = append(bad, state.Problem{Entry: entry, Err: err}) }
	for _, k := range slices.Sorted(maps.Keys(f.Tuples)) {
		switch t, err := collector.TakeSaved(f.Tuples[k], tuples[k], now); {
		case errors.Is(err, collector.ErrNotThisTuple):
		case err != nil:
			drop("tuples."+k, err.Error())
		default:
			out.Tuples[k] = t
		}
	}
	if f.Delays != nil {
		if err := json.Unmarshal(f.Delays, &out.Delays); err != nil {
			drop("delays", decode.ShortJSONError(err))
			out.Delays = nil
		}
		for _, k := range slices.Sorted(maps.Keys(out.Delays)) {
			if err := schedule.CheckSaved(k, out.Delays[k], now); err != nil {
				drop("delays."+strings.ReplaceAll(k, "\x00", "/"), err.Error())
				delete(out.Delays, k)
			}
		}
	}
	if f.Budget != nil {
		var b budget.Saved
		err := json.Unmarshal(f.Budget, &b)
		if err == nil {
			err = b.Check(now)
		}
		if err != nil {
			drop("budget", err.Error())
		} else {
			out.Budget = &b
		}
	}
	s.files.Dropped(a.Name, bad)
	return out
}

// takeLists reads the listing answers of a state file at now, numbers
// as upstream.List reads them; an answer dated ahead (it would be reused
// for ever) is dropped, and named.
func takeLists(raw json.RawMessage, now time.Time) (map[string]*expand.Answer, []state.Problem) {
	var lists map[string]*expand.Answer
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&lists); err != nil {
		return nil, []state.Problem{{Entry: "lists", Err: decode.ShortJSONError(err)}}
	}
	var bad []state.Problem
	for _, k := range slices.Sorted(maps.Keys(lists)) {
		if lists[k] == nil {
			delete(lists, k)
			continue
		}
		if err := schedule.CheckTime("at", lists[k].At, now, schedule.ClockSkew); err != nil {
			bad = append(bad, state.Problem{Entry: "lists." + k, Err: err.Error()})
			delete(lists, k)
		}
	}
	return lists, bad
}

// Save writes each API's snapshot as its state file (where it changed),
// with the listing answers of its account; one save at a time.
func (s *Store) Save(snaps []collector.Snapshot) {
	if s == nil {
		return
	}
	s.files.LockSaves()
	defer s.files.UnlockSaves()
	for i := range snaps {
		s.write(&snaps[i])
	}
}

// write writes one API's snapshot. The times JSON cannot hold (a year
// past 9999) are forgotten first (clock.ForgetFar; the engine's tuples
// come so): one row dated in year 10000 must not stop the whole file,
// the day's count with it, from being written.
func (s *Store) write(snap *collector.Snapshot) {
	f := state.NewFile(snap.API, snap.Account)
	for k, t := range snap.Tuples {
		if b := s.raw(snap.API, "tuples."+k, t); b != nil {
			f.Tuples[k] = b
		}
	}
	for k, e := range snap.Delays {
		clock.ForgetFar(&e.Seen, &e.Chased, &e.LeaderAt)
		snap.Delays[k] = e
	}
	for i := range snap.Pauses {
		clock.ForgetFar(&snap.Pauses[i].Until)
	}
	if len(snap.Delays) > 0 {
		f.Delays = s.raw(snap.API, "delays", snap.Delays)
	}
	if len(snap.Pauses) > 0 {
		f.Pauses = s.raw(snap.API, "pauses", snap.Pauses)
	}
	if lists := s.cache.Saved(snap.API, snap.Account); len(lists) > 0 {
		f.Lists = s.raw(snap.API, "lists", lists)
	}
	if snap.Budget != nil {
		b := *snap.Budget
		clock.ForgetFar(&b.At)
		f.Budget = s.raw(snap.API, "budget", b)
	}
	s.files.Write(snap.API, f)
}

// raw is v as JSON; what cannot be written (a number JSON cannot hold) is
// left out of the file, with a debug line.
func (s *Store) raw(api, entry string, v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		level.Debug(s.logger).Log("msg", "state entry not saved", "api", api, "entry", entry, "err", err)
		return nil
	}
	return b
}
