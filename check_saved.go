package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/go-kit/log"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/expand"
	"github.com/onchain-exporter/onchain_exporter/plan"
	"github.com/onchain-exporter/onchain_exporter/state"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// Offline, --config.check reads what the last run kept in --storage.path
// (read only: no lock is taken, nothing is written, so a running exporter
// is not disturbed): the listing answers and the key's plan of each API
// section, when they were read for the same account. With them it judges
// the tuples against the plan and expands all and patterns as the
// exporter would, without a call.

// maxSavedState bounds the state file the check reads.
const maxSavedState = 256 << 20

// savedAnswers are the listing answers (and plan) the last run kept for
// each API section of cfg, by API and path; why says what was not read.
type savedAnswers struct {
	byAPI map[string]map[string]*expand.Answer
	why   []string
}

func (s savedAnswers) get(api, path string) *expand.Answer { return s.byAPI[api][path] }

// readSaved reads the state files of cfg's API sections under dir.
func readSaved(dir string, cfg *config.Config) savedAnswers {
	out := savedAnswers{byAPI: map[string]map[string]*expand.Answer{}}
	for _, name := range config.APINames {
		a := cfg.APIs[name]
		if a == nil {
			continue
		}
		lists, err := readSavedLists(filepath.Join(dir, name+".json"), name, upstream.Account(a))
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			out.why = append(out.why, err.Error())
		default:
			out.byAPI[name] = lists
		}
	}
	return out
}

// readSavedLists reads the listing answers of one API's state file, when
// it was saved for account.
func readSavedLists(path, api, account string) (map[string]*expand.Answer, error) {
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
	var lists map[string]*expand.Answer
	if len(file.Lists) == 0 {
		return nil, os.ErrNotExist
	}
	dec := json.NewDecoder(bytes.NewReader(file.Lists))
	dec.UseNumber()
	if err := dec.Decode(&lists); err != nil {
		return nil, fmt.Errorf("%s: its listing answers: %w", path, err)
	}
	return lists, nil
}

// checkSaved is the offline check's use of the saved state: the plan's
// line and findings, and the configuration expanded from the saved lists
// (nil when nothing was saved), or why the lists show the file wrong.
func checkSaved(dir string, cfg *config.Config, logger log.Logger) (lines []string, findings []config.Finding, resolved *config.Config, err error) {
	saved := readSaved(dir, cfg)
	for _, w := range saved.why {
		lines = append(lines, "not read: "+w)
	}
	if len(saved.byAPI) == 0 {
		return lines, nil, nil, nil
	}
	var p *plan.Plan
	if a := saved.get(config.APIData, plan.Path); a != nil && cfg.APIs[config.APIData] != nil {
		out := expand.PlanOf(a)
		lines = append(lines, fmt.Sprintf("as the last run read it (%s): %s", a.At.UTC().Format("2006-01-02 15:04 MST"), out))
		p = out.Plan
	}
	resolved, err = expand.Offline(cfg, saved.get, p, logger)
	if err != nil {
		return lines, nil, nil, err
	}
	if p != nil {
		findings = resolved.CheckPlan(p, time.Now())
	}
	return lines, findings, resolved, nil
}
