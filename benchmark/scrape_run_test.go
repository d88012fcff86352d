package benchmark

import (
	"fmt"
	"github.com/onchain-exporter/onchain_exporter/internal/clock"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/collector"
	"github.com/onchain-exporter/onchain_exporter/config"
)

// staticUpstream answers every data API path with five daily rows whose
// value depends on the query, after latency: enough to fill a cache of
// any size without modelling real endpoints.
func staticUpstream(latency time.Duration) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if latency > 0 {
			time.Sleep(latency)
		}
		v := len(r.URL.RawQuery) * 1000
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"status":{"code":200,"message":"success"},"result":{"window":"day","data":[`)
		for i := 0; i < 5; i++ {
			if i > 0 {
				w.Write([]byte(","))
			}
			fmt.Fprintf(w, `{"date":"2026-11-%02d","open_interest":%d.5}`, 19-i, v+i)
		}
		fmt.Fprintf(w, `]}}`)
	}))
}

// ScrapeRig is an exporter over many open-interest tuples (exchange names
// are made up; the static upstream takes any).
type ScrapeRig struct {
	Exporter *collector.Exporter
	Tuples   int
	// Accept is the scrape's Accept header (none: the text format).
	Accept   string
	upstream *httptest.Server
}

// NewScrapeRig configures tuples tuples (two windows per exchange).
func NewScrapeRig(tuples, concurrency int, latency time.Duration, clk clock.Clock) (*ScrapeRig, error) {
	up := staticUpstream(latency)
	var b strings.Builder
	fmt.Fprintf(&b, "data:\n  url: %s\n  token_env: T\n  concurrency: %d\n  max_tuples: %d\n  metrics:\n    - path: /v1/btc/market-data/open-interest\n      window: [day, hour]\n      exchange: [", up.URL, concurrency, tuples)
	for i := 0; i < tuples/2; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "exchange_%05d", i)
	}
	b.WriteString("]\n")
	cfg, exp, err := newExporter("scrape.yml", b.String(), collector.Options{Clock: clk})
	if err != nil {
		up.Close()
		return nil, err
	}
	return &ScrapeRig{Exporter: exp, Tuples: len(cfg.Tuples), upstream: up}, nil
}

// Scrape serves one /metrics request with a scrape timeout and returns
// the number of series lines.
func (r *ScrapeRig) Scrape(timeout time.Duration) (int, error) {
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", strconv.FormatFloat(timeout.Seconds(), 'f', 3, 64))
	if r.Accept != "" {
		req.Header.Set("Accept", r.Accept)
	}
	w := &countingWriter{h: http.Header{}}
	r.Exporter.ServeHTTP(w, req)
	if w.code != 0 && w.code != http.StatusOK {
		return 0, fmt.Errorf("HTTP %d", w.code)
	}
	return w.lines, nil
}

// Close stops the exporter and the upstream.
func (r *ScrapeRig) Close() {
	r.Exporter.Close()
	r.upstream.Close()
}

// countingWriter discards the exposition, counting its sample lines.
type countingWriter struct {
	h     http.Header
	code  int
	lines int
}

func (w *countingWriter) Header() http.Header  { return w.h }
func (w *countingWriter) WriteHeader(code int) { w.code = code }
func (w *countingWriter) Write(p []byte) (int, error) {
	for i, c := range p {
		if c == '\n' && (i+1 >= len(p) || p[i+1] != '#') {
			w.lines++
		}
	}
	return len(p), nil
}

// RSS is the resident memory of this process, in bytes (Linux).
func RSS() (int64, error) { return rssOf("/proc/self/status") }

// rssOf reads VmRSS from a /proc/<pid>/status file.
func rssOf(status string) (int64, error) {
	b, err := os.ReadFile(status)
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in %s", status)
}

// Percentile returns the p-th percentile (0 < p <= 1) of durations, in
// milliseconds; durations is sorted in place.
func Percentile(durations []time.Duration, p float64) float64 {
	sort.Slice(durations, func(i, j int) bool { return durations[i] < durations[j] })
	i := int(math.Ceil(p*float64(len(durations)))) - 1
	return float64(durations[max(i, 0)].Microseconds()) / 1000
}

// newExporter loads a benchmark's configuration, whose credentials all read
// "bench" (the fake upstream's token), and starts an exporter on it, silent
// and with a registry of its own.
func newExporter(name, yml string, o collector.Options) (*config.Config, *collector.Exporter, error) {
	cfg, err := config.Parse(name, []byte(yml), func(string) string { return "bench" })
	if err != nil {
		return nil, nil, err
	}
	exp, err := collector.New(cfg, log.NewNopLogger(), prometheus.NewRegistry(), o)
	if err != nil {
		return nil, nil, err
	}
	return cfg, exp, nil
}
