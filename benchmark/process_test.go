package benchmark

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/app"
)

// BenchmarkProcess runs the whole exporter (package app, as the binary
// runs it: its HTTP server, the collectors, GOGC=50) in this process on
// 2 500 tuples (10 000 series) and scrapes it over HTTP on loopback as
// Prometheus would, asking for gzip: it reports the scrape time, and the
// resident memory (rss-MiB) and live heap (heap-MiB) the exporter added to
// what the process held before it was built. The upstream is a fake in
// this process that keeps nothing a tuple; the client's buffers are
// garbage once a scrape is read, and collected before the heap is read.
func BenchmarkProcess(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(50)) // as package main sets it
	b.Setenv("BENCH_TOKEN", "bench")
	dir := b.TempDir()
	up := staticUpstream(0)
	defer up.Close()
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "data:\n  url: %s\n  token_env: BENCH_TOKEN\n  concurrency: 8\n  max_tuples: 2500\n  metrics:\n    - path: /v1/btc/market-data/open-interest\n      window: [day, hour]\n      exchange: [", up.URL)
	for i := 0; i < 1250; i++ {
		if i > 0 {
			cfg.WriteString(", ")
		}
		fmt.Fprintf(&cfg, "exchange_%05d", i)
	}
	cfg.WriteString("]\n")
	cfgFile := filepath.Join(dir, "bench.yml")
	if err := os.WriteFile(cfgFile, []byte(cfg.String()), 0o600); err != nil {
		b.Fatal(err)
	}

	debug.FreeOSMemory()
	rss0, err := RSS()
	if err != nil {
		b.Fatal(err)
	}
	heap0 := liveHeap()
	o := app.DefaultOptions()
	addrs := []string{"127.0.0.1:0"}
	o.Web.WebListenAddresses = &addrs
	o.ConfigFile, o.StoragePath, o.StorageSet = cfgFile, "", true
	o.Logger, o.Slogger = app.NewLoggers(os.Stderr, "warn", "logfmt")
	exp, err := app.New(o)
	if err != nil {
		b.Fatal(err)
	}
	defer exp.Stop()
	if err := exp.Start(); err != nil {
		b.Fatal(err)
	}
	url := "http://" + exp.Addr() + "/metrics"
	// The client asks for gzip, as Prometheus does (Go's transport, and
	// decompresses), and counts the series as the body streams in.
	scrape := func() (int, error) {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", "10")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		w := &countingWriter{h: http.Header{}}
		_, err = io.Copy(w, resp.Body)
		return w.lines, err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		n, err := scrape()
		if err == nil && n >= 10000 {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("exporter not serving 10 000 series: %d, %v", n, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	durations := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if _, err := scrape(); err != nil {
			b.Fatal(err)
		}
		durations = append(durations, time.Since(start))
	}
	b.StopTimer()
	b.ReportMetric(Percentile(durations, 0.5), "p50-ms")
	b.ReportMetric(Percentile(durations, 0.99), "p99-ms")
	if rss, err := RSS(); err == nil {
		b.ReportMetric(float64(rss-rss0)/(1<<20), "rss-MiB")
	} else {
		b.Log(err)
	}
	b.ReportMetric((float64(liveHeap())-float64(heap0))/(1<<20), "heap-MiB")
}
