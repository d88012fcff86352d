package benchmark

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// TestJoinProcess measures a member joining at 10 000, 20 000 and 100 000
// tuples (RunJoin), each member the whole exporter (package app: its HTTP
// server and cluster transport) in this process, under
// ONCHAIN_BENCH_FULL=1; ONCHAIN_JOIN_TUPLES (say "10000,20000") picks the
// sizes, ONCHAIN_JOIN_MAX_STATE_BYTES the members'
// --cluster.max-state-bytes. Without it (CI) it joins two members over
// 500 tuples and checks the logic, not the times: the joiner serves every
// tuple without a call.
func TestJoinProcess(t *testing.T) {
	full := os.Getenv("ONCHAIN_BENCH_FULL") != ""
	sizes := []int{10_000, 20_000, 100_000}
	if !full {
		sizes = []int{500}
	}
	if s := os.Getenv("ONCHAIN_JOIN_TUPLES"); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				t.Fatalf("ONCHAIN_JOIN_TUPLES: %v", err)
			}
			sizes = append(sizes, n)
		}
	}
	maxState := 0
	if s := os.Getenv("ONCHAIN_JOIN_MAX_STATE_BYTES"); s != "" {
		var err error
		if maxState, err = strconv.Atoi(s); err != nil {
			t.Fatalf("ONCHAIN_JOIN_MAX_STATE_BYTES: %v", err)
		}
	}
	t.Setenv("BENCH_TOKEN", "bench") // the file's token_env
	fmt.Println("| tuples | full state | refused | joiner: /-/healthy after | first /metrics after | serves every tuple after | calls | CPU | RSS (peak) | heap in use | first member: fill, CPU, RSS, heap |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, n := range sizes {
		logs := &testtool.LogBuffer{}
		r, err := RunJoin(JoinOptions{Tuples: n, Dir: t.TempDir(), MaxStateBytes: maxState, Log: logs})
		if err != nil {
			t.Fatalf("%d tuples: %v\n%s", n, err, logs.String())
		}
		if r.Calls != 0 {
			t.Errorf("%d tuples: the joiner made %.0f calls, want none (it takes every row from the first member)", n, r.Calls)
		}
		fmt.Printf("| %d | %.2f MB | %.0f | %s | %s | %s | %.0f | %s | %.0f MiB (%.0f MiB) | %.0f MiB | %s, %s, %.0f MiB, %.0f MiB |\n", n, r.FullState/1e6, r.FullRefused,
			r.Healthy.Round(10e6), r.FirstScrape.Round(10e6), r.Serves.Round(10e6), r.Calls, r.CPU, float64(r.RSS)/(1<<20), float64(r.PeakRSS)/(1<<20),
			r.Heap/(1<<20), r.Fill.Round(1e8), r.FirstCPU, r.FirstRSS/(1<<20), r.FirstHeap/(1<<20))
	}
}

// TestJoin is the join's logic, in CI: a member that joins a cluster of
// 2 000 tuples takes every tuple's state from the first member by the
// join's push/pull, and serves every one of them without a call.
// ONCHAIN_JOIN_INPROCESS_TUPLES sets another size (for a profile:
// -cpuprofile).
func TestJoin(t *testing.T) {
	n := 2000
	if s := os.Getenv("ONCHAIN_JOIN_INPROCESS_TUPLES"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			t.Fatalf("ONCHAIN_JOIN_INPROCESS_TUPLES: %v", err)
		}
	}
	join, states, full, served, calls, err := JoinInProcess(n)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d tuples: join %s, %.0f full state of %.0f bytes (%.0f per tuple), served %d, calls %.0f", n, join, states, full, full/float64(n), served, calls)
	if served != n || calls != 0 {
		t.Errorf("the joiner serves %d of %d tuples with %.0f calls; want every one with none", served, n, calls)
	}
	if states != 1 {
		// The reconnect loop (every 200 ms here) once joined again
		// while the first join's push/pull was under way.
		t.Errorf("the joiner received %.0f full states, want the join's one", states)
	}
}
