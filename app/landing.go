package app

import (
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/common/version"

	"github.com/onchain-exporter/onchain_exporter/cluster"
	"github.com/onchain-exporter/onchain_exporter/collector"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/expand"
	"github.com/onchain-exporter/onchain_exporter/page"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// landingPage is the operator's page (package page) at /, the view of
// each series at /series and the JSON at /api/v1/status, on the
// configuration in force. It reads what the exporter publishes: no lock of
// the refresh engine, no upstream call. web.ListenAndServe puts it behind
// --web.config.file like /metrics.
type landingPage struct {
	cfg atomic.Pointer[config.Config]
	h   *page.Handler
}

// newLanding is the page of a running exporter; plans is the key's plan
// history, noted as the expander puts plans in force.
func newLanding(metricsPath string, demo bool, exp *collector.Exporter, peer *cluster.Peer, expander *expand.Expander,
	clients *upstream.Pool, plans *page.PlanHistory, now func() time.Time) *landingPage {
	l := &landingPage{}
	l.h = page.NewHandler(page.Source{Version: version.Info(), MetricsPath: metricsPath, Demo: demo,
		Config: l.cfg.Load, Engines: exp, Peer: peer, Expansion: expander.State, Clean: clients.Clean,
		Plans: plans, Now: now})
	return l
}

// Store puts the configuration in force on the page.
func (l *landingPage) Store(cfg *config.Config) { l.cfg.Store(cfg) }

func (l *landingPage) ServeHTTP(w http.ResponseWriter, r *http.Request) { l.h.ServeHTTP(w, r) }
