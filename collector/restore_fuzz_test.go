package collector

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/exposition"
	"github.com/onchain-exporter/onchain_exporter/schedule"
	"github.com/onchain-exporter/onchain_exporter/state"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// FuzzRestoredState: whatever a state file holds that state.Decode lets
// through, a tuple's entry read from it (its counters made non-negative,
// as TakeSaved does before its checks) rebuilds its series, renders its
// per-tuple families and is planned after being taken back, a success
// and a failure without panicking. (The file format itself is fuzzed in package state:
// FuzzStateDecode.)
func FuzzRestoredState(f *testing.F) {
	f.Add([]byte(`{"version":3,"api":"data","account":"x","tuples":{"k":{"digest":"d","state":{"samples":[{"field":{"Name":"a","Scale":1},"names":["l"],"values":["v"],"value":"+Inf"}],"polls":-3,"failures":-1}}},"delays":{"k":{"first":1,"depth":-5}},"lists":{"/p":null,"/q":{"rows":[{"a":1}]}}}`))
	f.Add([]byte(`{"version":3,"api":"data"}`))
	f.Add([]byte(`{"version":1}`))
	f.Add([]byte(``))
	f.Fuzz(func(t *testing.T, data []byte) {
		sf, err := state.Decode(data, "data")
		if err != nil {
			return
		}
		fams, tf := exposition.NewFamilies(), newTupleFamilies([]string{"api"})
		b := schedule.NewBook(nil)
		var delays map[string]schedule.Estimate
		if json.Unmarshal(sf.Delays, &delays) == nil {
			b.Restore(delays)
		}
		s := &apiSchedule{book: b}
		for _, w := range []string{"hour", "block"} {
			for _, raw := range sf.Tuples {
				var saved SavedTuple
				if json.Unmarshal(raw, &saved) != nil {
					continue
				}
				saved.State.Failures, saved.State.Polls = max(saved.State.Failures, 0), max(saved.State.Polls, 0)
				st := &tupleState{tuple: &config.Tuple{API: "data", Path: "/p", Window: w, Key: "k",
					TupleLabelValues: []string{"data"}}}
				d := door{tuple: st.tuple, sched: s, fams: fams, clean: func(m string) string { return m }, known: schedule.Known{Fresh: true}, now: time.Now()}
				st.cell, _ = step(d, st.cell, event{kind: evSaved, row: &saved.State})
				st.buildInfo(tf)
				d.now = st.Next.Time()
				st.cell, _ = step(d, st.cell, event{kind: evFailed, start: d.now, err: &upstream.Error{Code: "x"}})
			}
		}
	})
}
