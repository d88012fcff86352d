package collector

import (
	"encoding/json"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/onchain-exporter/onchain_exporter/decode"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/published"
)

// TestPeerRowLeavesWhatAFetchLeaves: a member that takes every row a peer
// fetched, as it comes (gossip), ends with what the peer has: the same
// values and views, the same learned publication delays and row delays
// observed, the same cadence. (A peer's row once entered as a state
// file's entry: no row_delay_seconds, the publication delay of the first
// guess, 18 s for hour rows and 432 s for day rows, on every member but
// the owner.)
func TestPeerRowLeavesWhatAFetchLeaves(t *testing.T) {
	owner := newEnv(t, supplyConfig, fakeapi.Options{})
	c := owner.clock
	// The replica is never scraped and never woken: its engine calls
	// nothing, every row it serves is the owner's.
	replica := envOn(t, c, owner.srv, supplyConfig)
	forward := func() {
		for _, e := range engines(owner.exp) {
			for _, row := range e.appendRows(nil, nil) {
				b, err := json.Marshal(row)
				if err != nil {
					t.Fatal(err)
				}
				if err := (replicated{replica.exp}).Merge(b); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	owner.scrape("10")
	forward()
	end := c.Now().Add(30 * time.Hour)
	for i := 0; i < 100_000; i++ {
		owner.exp.Settle()
		forward()
		next, ok := c.Next()
		if !ok || next.After(end) {
			break
		}
		if next.After(c.Now()) {
			c.Set(next)
		} else {
			c.Fire()
		}
	}
	owner.exp.Settle()
	forward()

	if a, b := owner.exp.PublicationDelays(), replica.exp.PublicationDelays(); len(a) == 0 || !equalDelays(a, b) {
		t.Errorf("publication delays: the owner's %v, the replica's %v", a, b)
	}
	if a, b := histograms(t, owner), histograms(t, replica); len(a) == 0 || !equalMaps(a, b) {
		t.Errorf("row_delay_seconds (count, sum) by window: the owner's %v, the replica's %v", a, b)
	}
	av, bv := owner.exp.View(), replica.exp.View()
	for i := range av {
		for j, s := range av[i].Series {
			r := bv[i].Series[j]
			if s.OK != r.OK || s.Served != r.Served || !s.Newest.Equal(r.Newest) || s.Spacing != r.Spacing || s.Earliest != r.Earliest {
				t.Errorf("%s: the owner's view %+v, the replica's %+v", s.Tuple.Key, s, r)
			}
		}
	}
	for i, e := range engines(owner.exp) {
		r := engines(replica.exp)[i]
		for j, st := range e.states {
			if got := r.states[j]; got.Interval != st.Interval || len(got.values) != len(st.values) {
				t.Errorf("%s: the replica learned spacing %v and serves %d series, the owner %v and %d", st.tuple.Key,
					got.Interval, len(got.values), st.Interval, len(st.values))
			}
		}
	}
}

func equalDelays(a, b map[published.EndpointWindow]time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func equalMaps(a, b map[string][2]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// histograms are row_delay_seconds' count and sum by window.
func histograms(t *testing.T, e *env) map[string][2]float64 {
	fams, err := e.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][2]float64{}
	for _, f := range fams {
		if f.GetName() != namespace+"_row_delay_seconds" {
			continue
		}
		for _, m := range f.Metric {
			out[window(m)] = [2]float64{float64(m.GetHistogram().GetSampleCount()), m.GetHistogram().GetSampleSum()}
		}
	}
	return out
}

func window(m *dto.Metric) string {
	for _, l := range m.Label {
		if l.GetName() == "window" {
			return l.GetValue()
		}
	}
	return ""
}

// TestPeerRowFitsAPacket: a row goes with its samples by the file's field
// (the receiver has the file), not with each field's help and type, and
// zero times and plans left out: every row of the supply configuration
// fits a gossip packet (memberlist's UDP limit, about 1400 bytes), and
// the receiver rebuilds the samples the sender serves.
func TestPeerRowFitsAPacket(t *testing.T) {
	e := newEnv(t, supplyConfig, fakeapi.Options{})
	e.scrape("10")
	for _, c := range engines(e.exp) {
		c.mu.Lock()
		for _, st := range c.states {
			row := c.rowLocked(st, nil)
			b, err := json.Marshal(row)
			if err != nil {
				t.Fatal(err)
			}
			if len(b) > 1400 {
				t.Errorf("%s: a row of %d bytes, more than a packet", st.tuple.Key, len(b))
			}
			var back peerRow
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			samples, ok := decode.FromWire(st.tuple, back.Samples)
			if !ok || len(samples) != len(st.Samples) || decode.Fit(st.tuple, samples) != nil {
				t.Fatalf("%s: the row's samples do not read back: %+v", st.tuple.Key, back.Samples)
			}
			for i := range samples {
				if samples[i].Field != st.Samples[i].Field || samples[i].Value != st.Samples[i].Value {
					t.Errorf("%s: sample %d read back as %+v, want %+v", st.tuple.Key, i, samples[i], st.Samples[i])
				}
			}
		}
		c.mu.Unlock()
	}
}
