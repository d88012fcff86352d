package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-kit/log/level"

	"github.com/onchain-exporter/onchain_exporter/budget"
)

// The day's count of an API's calls is written before the calls leave
// (budget.Reserver), in a file of its own beside the API's state file:
// DIR/budget-API.json, a few hundred bytes, so that a reservation costs
// one small write, synced and renamed into place, whatever the size of
// the state file.

// budgetFile is the content of DIR/budget-API.json.
type budgetFile struct {
	Version int          `json:"version"`
	API     string       `json:"api"`
	Account string       `json:"account"` // upstream.Account: a digest
	Budget  budget.Saved `json:"budget"`
}

// budgetVersion is the format of the reservation files.
const budgetVersion = 1

// maxBudgetFile bounds what a reservation file is read up to.
const maxBudgetFile = 4 << 10

func (s *Store) budgetPath(api string) string {
	return filepath.Join(s.dir, "budget-"+api+".json")
}

// readBudget reads an API's reservation file at open: one that cannot be
// used is a warning, and the API's count comes from its state file alone.
func (s *Store) readBudget(api string) {
	path := s.budgetPath(api)
	data, err := readFile(path, maxBudgetFile)
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	var f budgetFile
	if err == nil {
		err = json.Unmarshal(data, &f)
	}
	switch {
	case err != nil:
	case f.Version != budgetVersion:
		err = fmt.Errorf("format version %d, this exporter reads version %d", f.Version, budgetVersion)
	case f.API != api:
		err = fmt.Errorf("the file holds the budget of API %q, not %q", f.API, api)
	default:
		err = f.Budget.Check(s.now())
	}
	if err != nil {
		level.Warn(s.logger).Log("msg", "budget reservation file ignored", "file", path, "err", err)
		return
	}
	s.budgets[api] = &f
}

// KeepBudget makes b, the daily budget of API api for account
// (upstream.Account), survive any crash: it restores what the API's
// reservation file says was reserved today (when it was written for the
// same account), then makes b write each chunk of calls there before the
// calls leave (budget.SetReserver), synced and renamed into place. A
// write that fails holds the calls back and is logged once. The engine
// calls it for each API's budget before the budget's first call, and
// again after each reload; for a budget it already keeps, it does
// nothing. A nil Store, or one whose directory cannot be written, keeps
// nothing (the start warned).
func (s *Store) KeepBudget(api, account string, b *budget.Budget) {
	if s == nil || !s.writable || b == nil {
		return
	}
	s.mu.Lock()
	if s.kept[api] == b {
		s.mu.Unlock()
		return
	}
	s.kept[api] = b
	saved := s.budgets[api]
	delete(s.budgets, api)
	s.mu.Unlock()
	if saved != nil && saved.Account != "" && saved.Account == account {
		if err := b.Restore(saved.Budget, s.now()); err != nil {
			level.Warn(s.logger).Log("msg", "budget reservation file ignored", "file", s.budgetPath(api), "err", err)
		}
	}
	b.SetReserver(func(v budget.Saved) error { return s.reserve(api, account, v) })
}

// reserve writes an API's reservation file, synchronously; a failure is
// logged once until a write succeeds again.
func (s *Store) reserve(api, account string, v budget.Saved) error {
	data, err := json.Marshal(budgetFile{Version: budgetVersion, API: api, Account: account, Budget: v})
	if err == nil {
		err = writeAtomic(s.dir, s.budgetPath(api), data)
	}
	key := "budget-" + api
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		// Once until a write succeeds again: the temporary file's name
		// makes each error's text new.
		if s.failed[key] == "" {
			s.failed[key] = err.Error()
			level.Error(s.logger).Log("msg", "cannot write the day's call count; calls are held back until it can be written", "file", s.budgetPath(api), "err", err)
		}
		return err
	}
	s.failed[key] = ""
	return nil
}
