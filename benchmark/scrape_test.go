package benchmark

import (
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/internal/clock"
	"github.com/onchain-exporter/onchain_exporter/testtool/simclock"
)

func fixedNow() clock.Clock { return simclock.New(time.Date(2026, 11, 19, 12, 0, 0, 0, time.UTC)) }

// prometheusAccept is the Accept header Prometheus 2.42 scrapes with.
const prometheusAccept = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"

// BenchmarkWarmScrape serves a scrape of 10 000 series, all cached: the
// cost Prometheus sees every 15 s. It reports p50/p99 per scrape and the
// resident memory of the process, for the text format and for
// OpenMetrics (what Prometheus asks for).
func BenchmarkWarmScrape(b *testing.B) {
	b.Run("text", func(b *testing.B) { warmScrape(b, "") })
	b.Run("openmetrics", func(b *testing.B) { warmScrape(b, prometheusAccept) })
}

func warmScrape(b *testing.B, accept string) {
	rig, err := NewScrapeRig(2500, 8, 0, fixedNow()) // 2500 tuples x 4 series
	if err != nil {
		b.Fatal(err)
	}
	defer rig.Close()
	rig.Accept = accept
	n, err := rig.Scrape(30 * time.Second)
	if err != nil {
		b.Fatal(err)
	}
	if n < 10000 {
		b.Fatalf("warm-up scrape served %d series, want at least 10000", n)
	}
	durations := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if _, err := rig.Scrape(10 * time.Second); err != nil {
			b.Fatal(err)
		}
		durations = append(durations, time.Since(start))
	}
	b.StopTimer()
	b.ReportMetric(Percentile(durations, 0.5), "p50-ms")
	b.ReportMetric(Percentile(durations, 0.99), "p99-ms")
	b.ReportMetric(float64(n), "series")
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "live-heap-MiB")
	if rss, err := RSS(); err == nil {
		b.ReportMetric(float64(rss)/(1<<20), "rss-MiB")
	}
	runtime.KeepAlive(rig)
}

// BenchmarkColdScrape fills an empty cache: N tuples, upstream latency L,
// concurrency C. It reports the scrape time against the bound
// ceil(N/C)*L (target: at most 1.2 of it).
func BenchmarkColdScrape(b *testing.B) {
	const tuples, concurrency, latency = 40, 4, 100 * time.Millisecond
	bound := time.Duration(math.Ceil(float64(tuples)/concurrency)) * latency
	var worst time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		rig, err := NewScrapeRig(tuples, concurrency, latency, fixedNow())
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		n, err := rig.Scrape(30 * time.Second)
		took := time.Since(start)
		b.StopTimer()
		rig.Close()
		if err != nil || n < tuples*4 {
			b.Fatalf("cold scrape: %d series, %v", n, err)
		}
		worst = max(worst, took)
	}
	b.ReportMetric(float64(worst.Milliseconds()), "worst-ms")
	b.ReportMetric(float64(worst)/float64(bound), "x-bound")
}
