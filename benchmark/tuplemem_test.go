package benchmark

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// BenchmarkMemoryPerTuple serves n open-interest tuples (n/2 exchanges at
// day and hour, four series each), every one fetched: the heap and the
// resident memory they hold, a tuple, above what the process held before
// the exporter was built (the heap: less what is left once it is closed),
// and what a scrape of them all takes then. With ONCHAIN_HEAP_PROFILE set,
// the heap's profile (every allocation sampled) is written there once
// every tuple was fetched.
func BenchmarkMemoryPerTuple(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				memoryPerTuple(b, n)
			}
		})
	}
}

func memoryPerTuple(b *testing.B, n int) {
	profile := os.Getenv("ONCHAIN_HEAP_PROFILE")
	if profile != "" {
		defer func(rate int) { runtime.MemProfileRate = rate }(runtime.MemProfileRate)
		runtime.MemProfileRate = 1
	}
	debug.FreeOSMemory()
	rss0, _ := RSS()
	rig, err := NewScrapeRig(n, 16, 0, fixedNow())
	if err != nil {
		b.Fatal(err)
	}
	var lines int
	start := time.Now()
	for lines < 4*n {
		if time.Since(start) > 10*time.Minute {
			b.Fatalf("%d series served after %s, want %d", lines, time.Since(start), 4*n)
		}
		if lines, err = rig.Scrape(30 * time.Second); err != nil {
			b.Fatal(err)
		}
	}
	var scrapes []time.Duration
	for range 5 {
		t := time.Now()
		if _, err := rig.Scrape(30 * time.Second); err != nil {
			b.Fatal(err)
		}
		scrapes = append(scrapes, time.Since(t))
	}
	heap := liveHeap()
	debug.FreeOSMemory()
	rss, _ := RSS()
	if profile != "" {
		if err := writeHeapProfile(fmt.Sprintf("%s.%d", profile, n)); err != nil {
			b.Fatal(err)
		}
	}
	rig.Close()
	rig = nil
	after := liveHeap()
	b.ReportMetric((float64(heap)-float64(after))/float64(n), "heap-B/tuple")
	b.ReportMetric(float64(rss-rss0)/float64(n), "rss-B/tuple")
	b.ReportMetric(Percentile(scrapes, 0.5), "scrape-p50-ms")
	b.ReportMetric(float64(lines), "series")
}
