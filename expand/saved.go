package expand

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/decode"
	"github.com/onchain-exporter/onchain_exporter/state"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// What the last run kept in --storage.path (listing answers and the
// plan), read without a lock or a write, so that a running exporter is
// not disturbed: for the offline --config.check and a backfill's dry run.

// maxSavedState bounds a state file read.
const maxSavedState = 256 << 20

// Saved are the listing answers (and plan) the last run kept for each API
// section of a configuration, by API and path.
type Saved struct {
	byAPI map[string]map[string]*Answer
	Why   []string // what was not read
}

// Get is the answer the last run kept for the API's path, or nil.
func (s Saved) Get(api, path string) *Answer { return s.byAPI[api][path] }

// Empty says whether nothing was read.
func (s Saved) Empty() bool { return len(s.byAPI) == 0 }

// ReadSaved reads the state files of cfg's API sections under dir.
func ReadSaved(dir string, cfg *config.Config) Saved {
	out := Saved{byAPI: map[string]map[string]*Answer{}}
	for _, name := range config.APINames {
		a := cfg.APIs[name]
		if a == nil {
			continue
		}
		lists, err := readSavedLists(filepath.Join(dir, name+".json"), name, upstream.Account(a))
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			out.Why = append(out.Why, err.Error())
		default:
			out.byAPI[name] = lists
		}
	}
	return out
}

// readSavedLists reads the listing answers of one API's state file saved
// for account, their values shared (decode.ShareRows).
func readSavedLists(path, api, account string) (map[string]*Answer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSavedState+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > maxSavedState {
		return nil, fmt.Errorf("%s: larger than %d MiB, not read", path, maxSavedState>>20)
	}
	file, err := state.Decode(data, api)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if file.Account != account {
		return nil, fmt.Errorf("%s was saved for another key or address than the file's %s section", path, api)
	}
	var lists map[string]*Answer
	if len(file.Lists) == 0 {
		return nil, os.ErrNotExist
	}
	dec := json.NewDecoder(bytes.NewReader(file.Lists))
	dec.UseNumber()
	if err := dec.Decode(&lists); err != nil {
		return nil, fmt.Errorf("%s: its listing answers: %w", path, err)
	}
	for _, a := range lists {
		if a != nil {
			decode.ShareRows(a.Rows)
		}
	}
	return lists, nil
}
