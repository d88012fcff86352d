package state

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-kit/log"

	"github.com/onchain-exporter/onchain_exporter/config"
)

// FuzzLoadState: whatever the data API's file holds, a start (open, then
// Take for a configuration of tuples k and j) either ignores it or takes
// only what the exporter itself writes: every tuple's and delay's numbers
// pass their checks, the day's count passes budget's, and what was taken
// writes back (no time beyond year 9999). The seed corpus is in
// testdata/fuzz/FuzzLoadState.
func FuzzLoadState(f *testing.F) {
	f.Add([]byte(`{"version":3,"api":"data","account":"acct","tuples":{"k":{"digest":"d","state":{"samples":[{"field":{"Name":"a","Scale":1},"value":"NaN"}]}}}}`))
	f.Add([]byte(`{"version":3,"api":"data","account":"acct","delays":{"data /p hour":{"first":9000000000000000000}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "data.json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		cfg := checkConfig("k", "j")
		a := cfg.APIs[config.APIData]
		s := open(dir, cfg, log.NewNopLogger(), func() time.Time { return now })
		got := s.Take(a, "acct")
		if got == nil {
			return
		}
		for _, tu := range a.Tuples {
			st, ok := got.Tuples[tu.Key]
			if !ok {
				continue
			}
			if msg := CheckTuple(&st.State, tu, now); msg != "" {
				t.Errorf("tuple %s taken: %s", tu.Key, msg)
			}
		}
		for k := range got.Tuples {
			if k != "k" && k != "j" {
				t.Errorf("tuple %q taken, not configured", k)
			}
		}
		for k, e := range got.Delays {
			if msg := checkDelay(k, e, now); msg != "" {
				t.Errorf("delay %q taken: %s", k, msg)
			}
		}
		if got.Budget != nil {
			if err := got.Budget.Check(now); err != nil {
				t.Errorf("budget taken: %v", err)
			}
		}
		if _, err := json.Marshal(got); err != nil {
			t.Errorf("what was taken does not write back: %v", err)
		}
	})
}
