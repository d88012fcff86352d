package page

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/cluster"
	"github.com/onchain-exporter/onchain_exporter/collector"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// rig is a running exporter on the fake upstream, filled, and the page's
// source on it.
type rig struct {
	src  Source
	exp  *collector.Exporter
	reg  *prometheus.Registry
	fake *fakeapi.Server
}

// manyPaths are n paths the fake serves (fakeapi.Options.ExtraPaths).
func manyPaths(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("/v1/btc/bench-data/metric-%05d", i)
	}
	return out
}

// manyConfig is a data section of the paths, each at day and hour: two
// series a path.
func manyConfig(url string, paths []string, extra string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "data:\n  url: %s\n  token_env: T\n  concurrency: 16\n  max_tuples: 100000\n%s  metrics:\n", url, extra)
	for _, p := range paths {
		fmt.Fprintf(&b, "    - path: %s\n      window: [day, hour]\n", p)
	}
	return b.String()
}

// newRig runs an exporter of the configuration yaml (its %s the fake's
// URL) against a fake serving paths, and waits for its first fill.
func newRig(tb testing.TB, o fakeapi.Options, yaml func(url string) string) *rig {
	tb.Helper()
	fake := fakeapi.New(o)
	srv := httptest.NewServer(fake)
	tb.Cleanup(srv.Close)
	return newMember(tb, srv.URL, fake, nil, yaml)
}

// newMember runs an exporter on the upstream at url, a member of the
// cluster of peer (nil: alone).
func newMember(tb testing.TB, url string, fake *fakeapi.Server, peer *cluster.Peer, yaml func(url string) string) *rig {
	tb.Helper()
	cfg, err := config.Parse("page.yml", []byte(yaml(url)), func(string) string { return secret })
	if err != nil {
		tb.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	logger := log.NewNopLogger()
	pool := upstream.NewPool(reg, time.Now, logger)
	tb.Cleanup(pool.Close)
	exp, err := collector.New(cfg, logger, reg, collector.Options{Clients: pool, Peer: peer})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(exp.Close)
	r := &rig{exp: exp, reg: reg, fake: fake, src: Source{Version: "test", MetricsPath: "/metrics",
		Config: func() *config.Config { return cfg }, Engines: exp, Clean: pool.Clean, Now: time.Now, Peer: peer}}
	start := time.Now()
	r.scrape(tb)
	tb.Logf("filled in %v", time.Since(start))
	return r
}

// scrape serves /metrics once; the first waits for the first fill.
func (r *rig) scrape(tb testing.TB) string {
	tb.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", "120")
	r.exp.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		tb.Fatalf("/metrics: HTTP %d", rec.Code)
	}
	return rec.Body.String()
}

// get serves a path of the page.
func (r *rig) get(tb testing.TB, target string) (int, string) {
	tb.Helper()
	rec := httptest.NewRecorder()
	NewHandler(r.src).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	return rec.Code, rec.Body.String()
}
