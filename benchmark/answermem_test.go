package benchmark

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/collector"
)

// bigDataAnswer is a data-API answer of n supply rows, newest first:
// about 58 bytes a row.
func bigDataAnswer(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"status":{"code":200,"message":"success"},"result":{"window":"day","data":[`)
	day := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"date":"%s","supply_total":%d,"supply_new":%d.5}`, day.AddDate(0, 0, -i).Format(time.DateOnly), 19000000+i, i%900)
	}
	b.WriteString(`]}}`)
	return []byte(b.String())
}

// BenchmarkAnswerMemory measures what answers far larger than asked for
// cost: four supply tuples (the default concurrency, all refreshed at
// once) each answered with rows rows though the exporter asks for 5. It
// reports the answer's size and the peak of the Go heap in use during the
// refreshes above what it was before (the answers' bytes as read are
// counted in it; the server's copy is made before the measure).
func BenchmarkAnswerMemory(b *testing.B) {
	for _, rows := range []int{10_000, 60_000, 125_000} {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			body := bigDataAnswer(rows)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write(body)
			}))
			defer srv.Close()
			var yml strings.Builder
			fmt.Fprintf(&yml, "data:\n  url: %s\n  token_env: T\n  concurrency: 4\n  metrics:\n", srv.URL)
			for _, w := range []string{"day", "hour", "block"} {
				fmt.Fprintf(&yml, "    - path: /v1/btc/network-data/supply\n      window: %s\n", w)
			}
			// A fourth tuple on the same answer (its fields are not there:
			// read all the same, then found empty).
			yml.WriteString("    - path: /v1/xrp/network-data/velocity\n")
			for b.Loop() {
				_, exp, err := newExporter("mem.yml", yml.String(), collector.Options{})
				if err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				base := ms.HeapInuse
				var peak atomic.Uint64
				stop := make(chan struct{})
				done := make(chan struct{})
				go func() {
					defer close(done)
					var m runtime.MemStats
					for {
						runtime.ReadMemStats(&m)
						if m.HeapInuse > peak.Load() {
							peak.Store(m.HeapInuse)
						}
						select {
						case <-stop:
							return
						case <-time.After(2 * time.Millisecond):
						}
					}
				}()
				if _, err := scrapeText(exp); err != nil { // the first fill: four refreshes at once
					b.Fatal(err)
				}
				close(stop)
				<-done
				exp.Close()
				b.ReportMetric(float64(len(body))/(1<<20), "answer-MiB")
				b.ReportMetric(float64(peak.Load()-min(base, peak.Load()))/(1<<20), "peak-heap-MiB")
			}
		})
	}
}
