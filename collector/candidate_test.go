package collector

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/expand"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// TestFailedReloadLeavesTheClientsInForce: expanding a candidate
// configuration (a reload) calls through candidate clients and leaves the
// pool's clients in use as they are, so that a reload that then fails (its
// lists show the file wrong) changes nothing of the calls in force.
func TestFailedReloadLeavesTheClientsInForce(t *testing.T) {
	const good = `
consensus:
  url: "{{URL}}/consensus"
  timeout: 10s
  metrics:
    - path: /consensus
      asset: btc
`
	e := newEnv(t, good, fakeapi.Options{})
	pool := upstream.NewPool(prometheus.NewRegistry(), e.clock.Now, log.NewNopLogger())
	t.Cleanup(pool.Close)
	x := expand.New(log.NewNopLogger(), expand.Options{Now: e.clock.Now, Clients: pool})
	cfg, err := x.Expand(context.Background(), e.parse(good))
	if err != nil {
		t.Fatal(err)
	}
	exp, err := New(cfg, log.NewNopLogger(), prometheus.NewRegistry(), Options{Clock: e.clock, Clients: pool, IdleAfter: neverIdle})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(exp.Close)
	inForce := func() *upstream.Client {
		c := engines(exp)[0]
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.up
	}
	before := inForce()
	bad := strings.Replace(strings.Replace(good, "timeout: 10s", "timeout: 11s", 1), "asset: btc", "asset: dogecoin", 1)
	e.clock.Add(2 * time.Hour) // the asset list is asked for again
	calls := e.fake.CallsFor("/consensus/assets") + e.fake.CallsFor("/assets")
	if _, err := x.Expand(context.Background(), e.parse(bad)); err == nil {
		t.Fatal("an asset /assets does not know expanded")
	}
	if e.fake.CallsFor("/consensus/assets")+e.fake.CallsFor("/assets") == calls {
		t.Fatal("the candidate's expansion asked for no list: the test shows nothing")
	}
	if pool.Current(config.APIConsensus) != before || inForce() != before || before.API().Timeout != 10*time.Second {
		t.Error("expanding a candidate configuration replaced the client in force")
	}
}
