package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-kit/log/level"

	"github.com/onchain-exporter/onchain_exporter/internal/jsonerr"
)

// budgetFile is the content of DIR/budget-API.json, a file apart from the
// state file so that a reservation costs one small write whatever the
// state's size; Budget is the budget's snapshot (budget.Saved).
type budgetFile struct {
	Version int             `json:"version"`
	API     string          `json:"api"`
	Account string          `json:"account"` // the account's digest
	Budget  json.RawMessage `json:"budget"`
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
		if err = json.Unmarshal(data, &f); err != nil {
			err = errors.New(jsonerr.Short(err))
		}
	}
	switch {
	case err != nil:
	case f.Version != budgetVersion:
		err = fmt.Errorf("format version %d, this exporter reads version %d", f.Version, budgetVersion)
	case f.API != api:
		err = fmt.Errorf("the file holds the budget of API %q, not %q", f.API, api)
	case len(f.Budget) == 0 || string(f.Budget) == "null":
		err = errors.New("no budget in it")
	}
	if err != nil {
		s.ReservationIgnored(api, err)
		return
	}
	s.budgets[api] = &f
}

// TakeReservation hands back, once, the budget's snapshot in an API's
// reservation file when it was written for account; else nil. The budget
// checks it, and says why it refused it with ReservationIgnored.
func (s *Store) TakeReservation(api, account string) json.RawMessage {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.budgets[api]
	delete(s.budgets, api)
	if f == nil || f.Account == "" || f.Account != account {
		return nil
	}
	return f.Budget
}

// ReservationIgnored logs why an API's reservation file is not used.
func (s *Store) ReservationIgnored(api string, err error) {
	if s != nil {
		level.Warn(s.logger).Log("msg", "budget reservation file ignored", "file", s.budgetPath(api), "err", err)
	}
}

// Keeps says whether the Store writes reservations: false for a nil
// Store, or one whose directory cannot be written (the start warned).
func (s *Store) Keeps() bool { return s != nil && s.writable }

// Reserve writes the budget's snapshot v for account as an API's
// reservation file, synced and renamed into place before it returns: a
// call counted in v is on disk before it is made. A failure is returned,
// and logged once until a write succeeds again.
func (s *Store) Reserve(api, account string, v json.RawMessage) error {
	if !s.Keeps() {
		return errors.New("the storage directory cannot be written")
	}
	data, err := json.Marshal(budgetFile{Version: budgetVersion, API: api, Account: account, Budget: v})
	if err == nil {
		err = writeAtomic(s.dir, s.budgetPath(api), data)
	}
	key := "budget-" + api
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		// Not keyed on the error's text: the temporary file's name
		// makes each one new.
		if s.failed[key] == "" {
			s.failed[key] = err.Error()
			level.Error(s.logger).Log("msg", "cannot write the day's call count; calls are held back until it can be written", "file", s.budgetPath(api), "err", err)
		}
		return err
	}
	s.failed[key] = ""
	return nil
}
