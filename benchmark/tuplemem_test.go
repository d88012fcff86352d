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
//
// The upstream is a fake in this process (NewScrapeRig), so the process's
// figures are the exporter's and the fake's. The fake answers every call
// from its handler and keeps nothing a tuple: what closing it frees, once
// the exporter is closed, is reported as fake-heap-B/tuple (a few bytes a
// tuple, its connections), and heap-B/tuple and rss-B/tuple are, within
// that, the exporter's own.
//
// Beside them: spans-B/tuple is the heap's spans in use (runtime.MemStats
// HeapInuse) above the same baseline, the live heap and the free slots of
// spans left partly used, which resident memory holds and the heap does
// not count; warm-rss-B/tuple is rss-B/tuple above a baseline taken after
// an exporter of warmTuples tuples was built, filled, scraped and closed,
// so that what an exporter holds whatever its size (code, the runtime's
// own structures, the stacks of its 16 refresh workers and the buffers of
// its 16 connections) is not spread over the tuples: at 10 000 tuples it
// is a large part of rss-B/tuple, at 100 000 a small one.
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
	if _, _, err := fillRig(warmTuples); err != nil {
		b.Fatal(err)
	}
	debug.FreeOSMemory()
	warm, _ := RSS()
	var m0 runtime.MemStats
	runtime.ReadMemStats(&m0)
	rig, lines, err := fillRig(n)
	if err != nil {
		b.Fatal(err)
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
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	if profile != "" {
		if err := writeHeapProfile(fmt.Sprintf("%s.%d", profile, n)); err != nil {
			b.Fatal(err)
		}
	}
	// The exporter first, then the fake upstream: what the second frees
	// is the fake's share of the heap.
	exp, up := rig.Exporter, rig.upstream
	rig = nil
	exp.Close()
	exp = nil
	exporterGone := liveHeap()
	up.Close()
	after := liveHeap()
	b.ReportMetric((float64(heap)-float64(after))/float64(n), "heap-B/tuple")
	b.ReportMetric((float64(exporterGone)-float64(after))/float64(n), "fake-heap-B/tuple")
	b.ReportMetric(float64(rss-rss0)/float64(n), "rss-B/tuple")
	b.ReportMetric(float64(rss-warm)/float64(n), "warm-rss-B/tuple")
	b.ReportMetric((float64(m.HeapInuse)-float64(m0.HeapInuse))/float64(n), "spans-B/tuple")
	b.ReportMetric(Percentile(scrapes, 0.5), "scrape-p50-ms")
	b.ReportMetric(float64(lines), "series")
}

// warmTuples is the size of the warm-up rig: twice the rig's concurrency
// (16), so that the warm-up runs every refresh worker and opens every
// connection a rig of any size does, and what an exporter holds whatever
// its size (their goroutines' stacks, the connections' buffers, the code
// that runs) is in the warm baseline, not spread over the tuples.
const warmTuples = 32

// fillRig builds the rig of n tuples and scrapes it until every series is
// served, and says how many the last scrape served; the warm-up rig
// (warmTuples) is closed at once.
func fillRig(n int) (*ScrapeRig, int, error) {
	rig, err := NewScrapeRig(n, 16, 0, fixedNow())
	if err != nil {
		return nil, 0, err
	}
	var lines int
	start := time.Now()
	for lines < 4*n {
		if time.Since(start) > 10*time.Minute {
			rig.Close()
			return nil, 0, fmt.Errorf("%d series served after %s, want %d", lines, time.Since(start), 4*n)
		}
		if lines, err = rig.Scrape(30 * time.Second); err != nil {
			rig.Close()
			return nil, 0, err
		}
	}
	if n <= warmTuples {
		rig.Close()
		return nil, lines, nil
	}
	return rig, lines, nil
}
