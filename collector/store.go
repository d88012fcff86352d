package collector

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
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/decode"
	"github.com/onchain-exporter/onchain_exporter/expand"
	"github.com/onchain-exporter/onchain_exporter/schedule"
	"github.com/onchain-exporter/onchain_exporter/state"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// Store joins the state files of --storage.path (package state, which
// stores plain data) to the owners of what they hold. Each owner gives a
// snapshot of its own type and takes one back, checked:
//
//   - a tuple: Tuple, under its digest (savedTuple), checked by
//     admit (the door's checks, door.go) as it is read; taken by the
//     door (evSaved), its plan's time judged by the schedule
//     (Outcome.Restored);
//   - the learned delays: schedule.Book's Snapshot and Restore, each
//     estimate checked by schedule.Estimate.Check;
//   - the pauses: upstream.Client's Pauses and RestorePauses;
//   - the listing answers: expand.Cache's Saved and Restore, which Store
//     holds for the Expander (expand.Store);
//   - the day's count: budget.Budget's Saved and Restore, in the state
//     file and, reserved before each chunk of calls leaves, in the
//     reservation file (KeepBudget).
//
// A nil *Store keeps nothing.
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

// OpenStore takes dir for this process and reads the state files of the
// API sections cfg configures, each bounded by how many tuples its
// section may hold (state.Open). An empty dir returns nil: nothing is
// kept.
func OpenStore(dir string, cfg *config.Config, logger log.Logger) (*Store, error) {
	apis := map[string]int{}
	for name, a := range cfg.APIs {
		apis[name] = max(a.MaxTuples, len(a.Tuples))
	}
	files, err := state.Open(dir, apis, logger)
	if err != nil || files == nil {
		return nil, err
	}
	return NewStore(files, logger), nil
}

// NewStore keeps state in files, and hands the listing answers they hold
// to its Cache at once, for the first expansion. Nil files: nil.
func NewStore(files *state.Store, logger log.Logger) *Store {
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

// RestorePauses applies the saved pauses of a client's API, once, when the
// client is of the account they were saved for (expand.Store).
func (s *Store) RestorePauses(c *upstream.Client) {
	if s == nil {
		return
	}
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

// KeepBudget makes b, the daily budget of API api for account
// (upstream.Account), survive any crash: it restores what the API's
// reservation file says was reserved today (when it was written for the
// same account), then makes b write each chunk of calls there before the
// calls leave (budget.SetReserver, state.Store.Reserve). The engine calls
// it for each API's budget before the budget's first call, and again
// after each reload; for a budget it already keeps, it does nothing. A
// nil Store, or one whose directory cannot be written, keeps nothing
// (the start warned).
func (s *Store) KeepBudget(api, account string, b *budget.Budget) {
	if s == nil || !s.files.Keeps() || b == nil {
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

// savedAPI is what the last run left of an API section, checked: each
// part ready for its owner.
type savedAPI struct {
	tuples map[string]Tuple // by tuple key, of the same digest
	delays map[string]schedule.Estimate
	budget *budget.Saved
}

// take hands back the state file of an API section once (nil when there
// is none): only the entries of its tuples, each checked against its
// tuple at now; an entry that is not what the exporter writes is dropped
// with a warning naming the file and the entry.
func (s *Store) take(a *config.API, account string, now time.Time) *savedAPI {
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
	out := &savedAPI{tuples: make(map[string]Tuple, len(f.Tuples))}
	var bad []state.Problem
	drop := func(entry string, err string) { bad = append(bad, state.Problem{Entry: entry, Err: err}) }
	for _, k := range slices.Sorted(maps.Keys(f.Tuples)) {
		switch t, err := takeSaved(f.Tuples[k], tuples[k], now); {
		case errors.Is(err, errNotThisTuple):
		case err != nil:
			drop("tuples."+k, err.Error())
		default:
			out.tuples[k] = t
		}
	}
	if f.Delays != nil {
		if err := json.Unmarshal(f.Delays, &out.delays); err != nil {
			drop("delays", decode.ShortJSONError(err))
			out.delays = nil
		}
		for _, k := range slices.Sorted(maps.Keys(out.delays)) {
			e := out.delays[k]
			err := e.Check(delayWindow(k), now)
			if _, _, kerr := schedule.ParseKey(k); kerr != nil {
				err = kerr
			}
			if err != nil {
				drop("delays."+strings.ReplaceAll(k, "\x00", "/"), err.Error())
				delete(out.delays, k)
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
			out.budget = &b
		}
	}
	s.files.Dropped(a.Name, bad)
	return out
}

// delayWindow is the largest spacing of the rows a learned delay's key
// (schedule.ParseKey) can have been learned for: its window's; for a
// block window or a series without a window, whose spacing is learned (up
// to schedule.MaxSpacing), that bound.
func delayWindow(key string) time.Duration {
	k, _, err := schedule.ParseKey(key)
	if w := config.WindowDuration(k.Window); err == nil && w > 0 {
		return w
	}
	return schedule.MaxSpacing
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

// apiSnapshot is what the owners of one API's state gave for a save,
// each part its owner's snapshot.
type apiSnapshot struct {
	api, account string
	tuples       map[string]savedTuple        // the engine's, by tuple key
	delays       map[string]schedule.Estimate // schedule.Book.Snapshot
	pauses       []upstream.Pause             // upstream.Client.Pauses
	lists        map[string]*expand.Answer    // expand.Cache.Saved
	budget       *budget.Saved                // budget.Budget.Saved
}

// write writes the snapshot as the API's state file (where it changed).
// The times JSON cannot hold (a year past 9999) are forgotten first: one
// row dated in year 10000 must not stop the whole file, the day's count
// with it, from being written.
func (s *Store) write(snap *apiSnapshot) {
	f := state.NewFile(snap.api, snap.account)
	for k, t := range snap.tuples {
		t.State.forgetFarTimes()
		if b := s.raw(snap.api, "tuples."+k, t); b != nil {
			f.Tuples[k] = b
		}
	}
	for k, e := range snap.delays {
		forgetFarTimes(&e.Seen, &e.Chased, &e.LeaderAt)
		snap.delays[k] = e
	}
	for i := range snap.pauses {
		forgetFarTimes(&snap.pauses[i].Until)
	}
	if len(snap.delays) > 0 {
		f.Delays = s.raw(snap.api, "delays", snap.delays)
	}
	if len(snap.pauses) > 0 {
		f.Pauses = s.raw(snap.api, "pauses", snap.pauses)
	}
	if len(snap.lists) > 0 {
		f.Lists = s.raw(snap.api, "lists", snap.lists)
	}
	if snap.budget != nil {
		b := *snap.budget
		forgetFarTimes(&b.At)
		f.Budget = s.raw(snap.api, "budget", b)
	}
	s.files.Write(snap.api, f)
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
