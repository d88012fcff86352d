package collector

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/cluster"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/schedule"
	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// FuzzPeerRows: whatever a peer sends as this member's rows (a delta, a
// full state of frames, an earlier version's JSON array) is taken or
// refused, never a panic, and what is served after it is finite numbers.
// Its corpus is kept in testdata/fuzz; run it for a while with
//
//	go test ./collector -run '^$' -fuzz FuzzPeerRows -fuzztime 60s
func FuzzPeerRows(f *testing.F) {
	up := testtool.StartFake(f, fakeapi.Options{})
	reg := prometheus.NewRegistry()
	p, err := cluster.Create(clusterConfig("fuzz"), log.NewNopLogger(), reg)
	if err != nil {
		f.Fatal(err)
	}
	exp, err := New(testtool.Config(f, up.Srv.URL, supplyConfig), log.NewNopLogger(), reg, Options{Clock: up.Clock, IdleAfter: neverIdle, Peer: p})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() {
		exp.Close()
		_ = p.Leave(time.Second)
	})
	testtool.Scrape(f, exp, "10")
	var rows []peerRow
	for _, eng := range engines(exp) {
		rows = eng.appendRows(rows, p)
	}
	now := up.Clock.Now()
	for i, row := range rows {
		row.State.LastAttempt = schedule.InstantOf(now.Add(time.Duration(i+1) * time.Second))
		b, _ := json.Marshal(row)
		f.Add(b)
		row.State.OK, row.State.Next, row.Samples = false, schedule.InstantOf(now.Add(23*time.Hour)), nil
		b, _ = json.Marshal(row)
		f.Add(b)
		row.State.OK, row.State.Newest = true, schedule.InstantOf(now.Add(59*time.Minute))
		b, _ = json.Marshal(row)
		f.Add(b)
	}
	full, err := (replicated{exp}).MarshalBinary()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(full)
	old, _ := json.Marshal(rows)
	f.Add(old)
	f.Add([]byte(`{"api":"data","member":"rogue","day":"2026-11-20T00:00:00Z","used":9223372036854775807}`))
	f.Add([]byte(`[{"api":"data","s":[{"f":"x","v":1e999}]}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = (replicated{exp}).Merge(b)
		body := testtool.Serve(t, exp, "10")
		for _, line := range strings.Split(body, "\n") {
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			if err != nil || math.IsNaN(v) {
				t.Fatalf("served %q", line)
			}
		}
	})
}
