package collector

import (
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/schedule"
	"github.com/onchain-exporter/onchain_exporter/state"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// FuzzRestoredState: whatever a state file holds that state.Decode lets
// through, a tuple restored from it rebuilds its series, renders its
// per-tuple families and is planned after a success and a failure
// without panicking. (The file format itself is fuzzed in package state:
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
		fams, tf := newFamilies(), newTupleFamilies([]string{"api"})
		b := schedule.NewBook(nil)
		b.Restore(sf.Delays)
		s := &apiSchedule{book: b}
		for _, w := range []string{"hour", "block"} {
			for _, saved := range sf.Tuples {
				st := &tupleState{tuple: &config.Tuple{API: "data", Path: "/p", Window: w, Key: "k",
					TupleLabelValues: []string{"data"}}, Tuple: saved.State}
				st.rebuild(fams)
				st.buildInfo(tf)
				s.afterSuccess(st, st.Newest.Add(-time.Hour), time.Time{}, st.Next)
				st.Failures++
				s.afterError(st, &upstream.Error{Code: "x"}, st.Next)
			}
		}
	})
}
