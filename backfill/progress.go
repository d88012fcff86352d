package backfill

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/onchain-exporter/onchain_exporter/budget"
)

// The progress file records what a run wrote, series by series, with the
// settings it wrote them with, so that a run started again with the same
// settings calls the upstream only for the series not yet written. It is
// saved at most every saveEvery (a change that comes sooner is saved when
// saveEvery has passed) and at the end, always after the samples
// it records are on disk or acknowledged: what it records is written;
// what was written after the last save is written again (the same samples
// at the same times).

const (
	progressVersion = 1
	saveEvery       = 2 * time.Second
)

type progressFile struct {
	Version int    `json:"version"`
	Target  string `json:"target"`
	// Settings that change what a series' samples are: a run with other
	// ones would mix two kinds of history in one output.
	From   time.Time         `json:"from"`
	To     time.Time         `json:"to"`
	Stamp  Stamp             `json:"stamp"`
	Step   string            `json:"step"`
	Labels map[string]string `json:"labels,omitempty"`
	// Complete says the output holds every series recorded.
	Complete bool `json:"complete,omitempty"`
	// Series are the tuples written, by tuple key.
	Series map[string]seriesRecord `json:"series"`
	// Families are those written: their HELP and type, who produces them
	// with which labels (series.Claims), and for an OpenMetrics output the
	// length of their part.
	Families map[string]familyRecord `json:"families,omitempty"`
	// Budgets are the day's count of each API's daily budget (budget.go).
	Budgets map[string]budget.Saved `json:"budgets,omitempty"`
}

type seriesRecord struct {
	Rows    int       `json:"rows"`
	Samples int64     `json:"samples"`
	Calls   int       `json:"calls"`
	Oldest  time.Time `json:"oldest,omitzero"`
	Newest  time.Time `json:"newest,omitzero"`
}

type familyRecord struct {
	Help   string   `json:"help"`
	Type   string   `json:"type"`
	Owner  string   `json:"owner,omitempty"`
	Labels []string `json:"labels,omitempty"`
	Size   int64    `json:"size,omitempty"`
}

// progress is the progress file of a run.
type progress struct {
	path  string
	file  progressFile
	saved time.Time
	dirty bool
}

// openProgress reads the progress file at path, or starts one. A file
// written with other settings is an error that says which and what to do;
// toSet says --to was given: otherwise the recorded --to is kept, so that
// a resumed run ends where the first was to.
func openProgress(path string, want progressFile, toSet bool) (*progress, error) {
	p := &progress{path: path, file: want}
	p.file.Version = progressVersion
	p.file.Series = map[string]seriesRecord{}
	p.file.Families = map[string]familyRecord{}
	if path == "" {
		return p, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return p, nil
	}
	if err != nil {
		return nil, err
	}
	var got progressFile
	if err := json.Unmarshal(b, &got); err != nil {
		return nil, fmt.Errorf("progress file %s: %v; remove it to start over", path, err)
	}
	if got.Version != progressVersion {
		return nil, fmt.Errorf("progress file %s is of version %d, not %d; remove it to start over", path, got.Version, progressVersion)
	}
	var diffs []string
	diff := func(flag, was, now string) {
		if was != now {
			diffs = append(diffs, fmt.Sprintf("%s %s (now %s)", flag, was, now))
		}
	}
	diff("target", got.Target, want.Target)
	diff("--from", got.From.Format(time.RFC3339), want.From.Format(time.RFC3339))
	if toSet {
		diff("--to", got.To.Format(time.RFC3339), want.To.Format(time.RFC3339))
	}
	diff("--sample-time", string(got.Stamp), string(want.Stamp))
	diff("--sample-interval", got.Step, want.Step)
	diff("--label", labelList(got.Labels), labelList(want.Labels))
	if len(diffs) > 0 {
		return nil, fmt.Errorf("progress file %s was written with %s: run again with the same settings to go on, or remove it to start over",
			path, strings.Join(diffs, ", "))
	}
	if got.Series == nil {
		got.Series = map[string]seriesRecord{}
	}
	if got.Families == nil {
		got.Families = map[string]familyRecord{}
	}
	p.file = got
	return p, nil
}

func labelList(m map[string]string) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, k+"="+m[k])
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ",")
}

// save writes the file when it changed and the last save is older than
// saveEvery, or at once with force.
func (p *progress) save(now time.Time, force bool) error {
	if p.path == "" || !p.dirty || !force && now.Sub(p.saved) < saveEvery {
		return nil
	}
	b, err := json.MarshalIndent(p.file, "", " ")
	if err != nil {
		return err
	}
	if err := writeAtomic(p.path, b); err != nil {
		return fmt.Errorf("progress file: %w", err)
	}
	p.saved, p.dirty = now, false
	return nil
}

// writeAtomic writes a file whole or not at all.
func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if err = errors.Join(err, tmp.Sync(), tmp.Close()); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
