package persist

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-kit/log"

	"github.com/onchain-exporter/onchain_exporter/collector"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/schedule"
)

// FuzzLoadState: whatever the data API's file holds, a start (the Store
// opened, then take for a configuration of tuples k and j) either ignores
// it or takes only what the exporter itself writes: every tuple's and
// delay's numbers pass their checks, the day's count passes budget's, the
// listing answers none dated ahead, and what was taken writes back (no
// time beyond year 9999). The seed corpus is in
// testdata/fuzz/FuzzLoadState.
func FuzzLoadState(f *testing.F) {
	f.Add([]byte(`{"version":3,"api":"data","account":"acct","tuples":{"k":{"digest":"d","state":{"samples":[{"field":{"Name":"a","Scale":1},"value":"NaN"}]}}}}`))
	f.Add([]byte(`{"version":3,"api":"data","account":"acct","delays":{"data /p hour":{"first":9000000000000000000}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "data.json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		a := &config.API{Name: config.APIData, Tuples: []*config.Tuple{savedHourTuple("k"), savedHourTuple("j")}}
		s := storeAt(dir, savedAt, log.NewNopLogger())
		for path, l := range s.Cache().Saved(config.APIData, "acct") {
			if l == nil || l.At.After(savedAt.Add(schedule.ClockSkew)) {
				t.Errorf("listing answer %q taken: %+v", path, l)
			}
		}
		got := s.Take(a, "acct", savedAt)
		if got == nil {
			return
		}
		for _, tu := range a.Tuples {
			st, ok := got.Tuples[tu.Key]
			if !ok {
				continue
			}
			// What was taken writes back, and is taken again whole
			// through the door's checks.
			raw, err := json.Marshal(collector.SaveTuple(tu, st))
			if err != nil {
				t.Errorf("tuple %q taken does not write back: %v", tu.Key, err)
				continue
			}
			if _, err := collector.TakeSaved(raw, tu, savedAt); err != nil {
				t.Errorf("tuple %s taken: %v", tu.Key, err)
			}
		}
		for k := range got.Tuples {
			if k != "k" && k != "j" {
				t.Errorf("tuple %q taken, not configured", k)
			}
		}
		for k, e := range got.Delays {
			if err := schedule.CheckSaved(k, e, savedAt); err != nil {
				t.Errorf("delay %q taken: %v", k, err)
			}
		}
		if got.Budget != nil {
			if err := got.Budget.Check(savedAt); err != nil {
				t.Errorf("budget taken: %v", err)
			}
		}
		if _, err := json.Marshal(got.Delays); err != nil {
			t.Errorf("the delays taken do not write back: %v", err)
		}
	})
}
