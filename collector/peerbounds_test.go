package collector

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/schedule"
	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// filledReplica is a member alone in its cluster, filled from the fake,
// and the state of its tuple of open interest by hour on binance: rows
// that claim to come from it are its owner's (a rogue can give any name).
func filledReplica(t *testing.T) (*replica, *apiCollector, *tupleState) {
	t.Helper()
	up := testtool.StartFake(t, fakeapi.Options{})
	r := startReplica(t, "a", supplyConfig, up)
	r.scrape("10")
	r.exp.Settle()
	eng := engines(r.exp)[0]
	eng.mu.Lock()
	defer eng.mu.Unlock()
	for _, st := range eng.states {
		if st.tuple.Window == "hour" && strings.Contains(st.tuple.Key, "binance") {
			if !st.OK || st.Samples == nil {
				t.Fatalf("%s not filled: %+v", st.tuple.Key, st.Tuple)
			}
			return r, eng, st
		}
	}
	t.Fatal("no hour tuple on binance")
	return nil, nil, nil
}

// send merges a row of st as a delta from its owner, after change edits
// it, at the replica's time.
func send(t *testing.T, r *replica, eng *apiCollector, st *tupleState, change func(*peerRow)) {
	t.Helper()
	eng.mu.Lock()
	row := eng.rowLocked(st, r.peer)
	eng.mu.Unlock()
	change(&row)
	b, err := json.Marshal(row)
	if err != nil {
		t.Fatal(err)
	}
	if err := (replicated{r.exp}).Merge(b); err != nil {
		t.Fatal(err)
	}
	r.exp.Settle()
}

// A failure row from the unit's owner whose next call is 23 h ahead, with
// no values and failing since 2020, does not freeze the tuple: its next
// call is no later than this member's policy waits after a failure (5
// min), its values stay served, and what it keeps (and saves) holds them.
// Before, the series was held 23 h with no value on every member, and
// after a restart too, from the saved state.
func TestPeerFailureRowBoundedByThisMembersPolicy(t *testing.T) {
	r, eng, st := filledReplica(t)
	before := dataLines(r.serve("10"))
	r.clock.Add(time.Minute)
	now := r.clock.Now()
	send(t, r, eng, st, func(row *peerRow) {
		row.State.OK, row.State.LastCode, row.State.Failures = false, "server_error", 1
		row.State.LastAttempt, row.State.FailingSince = schedule.InstantOf(now), schedule.InstantOf(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
		row.State.Next = schedule.InstantOf(now.Add(23 * time.Hour))
		row.Samples = nil
	})
	eng.mu.Lock()
	kept := st.Tuple
	eng.mu.Unlock()
	if got := counter(r.serve("10"), `onchain_exporter_cluster_rows_received_total{api="data"}`); got != 1 {
		t.Fatalf("the failure row was not taken (rows_received_total %v): the test does not reach its bounds", got)
	}
	if kept.OK || kept.LastCode != "server_error" {
		t.Errorf("the peer's failure is not shown: ok %v, code %q", kept.OK, kept.LastCode)
	}
	if most := now.Add(5 * time.Minute); kept.Next.Time().After(most) {
		t.Errorf("next call at %s after a peer's failure, want no later than %s", kept.Next.Time().Format(time.RFC3339), most.Format(time.RFC3339))
	}
	if kept.Samples == nil || kept.FailingSince.Time().Before(now.Add(-2*time.Minute)) {
		t.Errorf("the state kept (and saved) holds samples %v, failing since %s", kept.Samples != nil, kept.FailingSince)
	}
	if after := dataLines(r.serve("10")); after != before {
		t.Errorf("a peer's failure changed what is served:\nbefore\n%s\nafter\n%s", before, after)
	}
}

// A row from the owner dated 59 min ahead, for an hour tuple, is refused
// as a fetched answer's would not be served: a peer's row is never dated
// ahead. Before, it was taken and served, and the next real row came
// 1.5 h late.
func TestPeerRowAheadRefused(t *testing.T) {
	r, eng, st := filledReplica(t)
	eng.mu.Lock()
	newest := st.Newest
	eng.mu.Unlock()
	r.clock.Add(time.Minute)
	now := r.clock.Now()
	send(t, r, eng, st, func(row *peerRow) {
		row.State.LastAttempt, row.State.LastSuccess = schedule.InstantOf(now), schedule.InstantOf(now)
		row.State.RowTime, row.State.Newest = schedule.InstantOf(now.Add(59*time.Minute)), schedule.InstantOf(now.Add(59*time.Minute))
	})
	body := r.serve("10")
	if got := counter(body, `onchain_exporter_cluster_rows_refused_total{api="data",reason="invalid"}`); got != 1 {
		t.Errorf("rows_refused_total{reason=invalid} = %v, want the row dated ahead refused", got)
	}
	eng.mu.Lock()
	defer eng.mu.Unlock()
	if !st.Newest.Time().Equal(newest.Time()) {
		t.Errorf("the newest row moved from %s to %s", newest, st.Newest)
	}
}
