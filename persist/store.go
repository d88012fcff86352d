// Package persist is the one place persistence is wired: it joins the
// state files of --storage.path (package state, plain data) to the owners
// of what they hold, each giving a snapshot of its own type and taking
// one back checked (collector.TakeSaved for tuples, schedule.CheckSaved
// for delays, upstream.Client's pauses, expand.Cache's listing answers,
// budget.Saved.Check for the day's count). The Store is the engine's
// collector.Keeper, and Keep hooks up each client the upstream pool puts
// in force, at start, at a reload and for listing calls alike.
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

// Store joins the state files to their owners. A nil *Store keeps nothing.
type Store struct {
	files  *state.Store
	logger log.Logger
	now    func() time.Time
	cache  *expand.Cache // listing answers: the files', then expansion's

	mu   sync.Mutex
	kept map[string]*budget.Budget // the budgets that reserve in the files
}

var _ collector.Keeper = (*Store)(nil)

// Open takes dir for this process and reads the state files of the API
// sections cfg configures (state.Open). An empty dir returns nil.
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

// New keeps state in files, whose listing answers go to its Cache at
// once, for the first expansion. Nil files: nil.
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

// Cache returns the listing answers the Store saves, for the Expander
// (expand.Store); nil for a nil Store.
func (s *Store) Cache() *expand.Cache {
	if s == nil {
		return nil
	}
	return s.cache
}

// Keep hooks up a client put in force (upstream.Pool.OnClient): its saved
// pauses, once, and the reservation of its daily budget.
func (s *Store) Keep(c *upstream.Client) {
	if s == nil {
		return
	}
	s.restorePauses(c)
	s.keepBudget(c.API().Name, c.Account(), c.Budget())
}

// restorePauses applies the pauses saved for the client's API and
// account, once.
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

// keepBudget makes b, the daily budget of api for account, survive any
// crash: it restores the reservation file written for account, then has b
// write each chunk of calls there before they leave (budget.SetReserver).
// A budget already kept (a client rebuilt for the same account carries
// it over) is left alone; a directory that cannot be written keeps none.
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
// is none), each part checked at now; an entry that is not what the
// exporter writes is dropped with a warning naming the file and entry.
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

// takeLists reads the listing answers of a state file, numbers as
// upstream.List reads them; one dated after now (it would be reused for
// ever) is dropped, and named.
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

// write writes one API's snapshot. Times JSON cannot hold (past year
// 9999) are forgotten first (clock.ForgetFar; the tuples come so): one
// such row must not stop the whole file, day's count included.
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

// raw is v as JSON; what cannot be written is left out, with a debug line.
func (s *Store) raw(api, entry string, v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		level.Debug(s.logger).Log("msg", "state entry not saved", "api", api, "entry", entry, "err", err)
		return nil
	}
	return b
}
