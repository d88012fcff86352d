package cluster_test

import (
	"context"
	"os"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/cluster"
)

// rows stands for the engine's replicated state: what the owners fetched.
type rows struct{}

func (rows) MarshalBinary() ([]byte, error) { return nil, nil }
func (rows) Merge([]byte) error             { return nil }

// How main and the engine use the package: flags, Create, AddState, Join,
// Settle; then, for each refresh unit, fetch it when owning it, or wait
// FallbackDelay for the owner's row before fetching it in its place.
func Example() {
	app := kingpin.New("onchain_exporter", "")
	cfg := cluster.AddFlags(app)
	if _, err := app.Parse(os.Args[1:]); err != nil {
		return
	}
	if err := cfg.Validate(); err != nil {
		return // exit 2, as for any bad flag
	}
	logger := log.NewLogfmtLogger(os.Stderr)
	peer, err := cluster.Create(*cfg, logger, prometheus.DefaultRegisterer)
	if err != nil {
		return // cannot listen: exit 1
	}
	// A nil peer (cluster mode off) is a cluster of one from here on.
	defer peer.Leave(5 * time.Second)
	state := rows{}
	ch := peer.AddState("rows", state) // before Join
	if err := peer.Join(context.Background()); err != nil {
		logger.Log("msg", "no peer reachable yet; retrying in the background", "err", err)
	}
	peer.Settle(context.Background())

	unit := "data/price/BTC"
	if _, rank := peer.Owner(unit); rank == 0 {
		// Fetch, publish, and send the row to the others.
		ch.Broadcast([]byte("the row, its time, what the schedule learned"))
	} else {
		// Wait until due + peer.FallbackDelay(unit) for the owner's row
		// (merged into state); fetch it here if it has not come.
		_ = peer.FallbackDelay(unit)
	}
	_ = peer.Changed() // fires when units may have moved: plan again
}
