package benchmark

import (
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/collector"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
)

// BenchmarkSlowUpstreamScrape measures scrapes against an upstream that
// answers in 3 s, in real time: 40 tuples due every 5 s (revalidate),
// two replicas scraping every second for 20 s. It reports the p50 and p99
// scrape durations and the upstream calls made meanwhile (the rows still
// arrive: the engine refreshes in the background). The first fill is
// done before the clock starts, as after any start.
func BenchmarkSlowUpstreamScrape(b *testing.B) {
	for b.Loop() {
		fake := fakeapi.New(fakeapi.Options{DataToken: "bench", Latency: 3 * time.Second})
		srv := httptest.NewServer(fake)
		var yml strings.Builder
		fmt.Fprintf(&yml, "data:\n  url: %s\n  token_env: T\n  concurrency: 8\n  revalidate: 5s\n  metrics:\n", srv.URL)
		for _, ex := range liveExchanges { // 10 exchanges × 2 windows × 2 symbols = 40 tuples
			fmt.Fprintf(&yml, "    - path: /v1/btc/market-data/open-interest\n      window: [hour, day]\n      exchange: %s\n      symbol: [all_symbol, btc_usd]\n", ex)
		}
		_, exp, err := newExporter("slow.yml", yml.String(), collector.Options{})
		if err != nil {
			b.Fatal(err)
		}
		for filled := false; !filled; { // the first fill: 40 calls of 3 s, 8 at a time
			body, err := scrapeText(exp)
			if err != nil {
				b.Fatal(err)
			}
			filled = strings.Contains(string(body), `onchain_exporter_scrape_collector_success{collector="data"} 1`)
		}
		before := fake.Calls("data")
		var mu sync.Mutex
		var took []time.Duration
		var wg sync.WaitGroup
		for r := 0; r < 2; r++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				time.Sleep(time.Duration(r) * 500 * time.Millisecond)
				for i := 0; i < 20; i++ {
					start := time.Now()
					if _, err := scrapeText(exp); err != nil {
						b.Error(err)
					}
					d := time.Since(start)
					mu.Lock()
					took = append(took, d)
					mu.Unlock()
					time.Sleep(time.Second - d%time.Second)
				}
			}()
		}
		wg.Wait()
		calls := fake.Calls("data") - before
		exp.Close()
		srv.Close()
		slices.Sort(took)
		b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
		b.ReportMetric(float64(calls), "calls")
		if calls == 0 {
			b.Error("no upstream call while scrapes came: the rows stopped arriving")
		}
	}
}
