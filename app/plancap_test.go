package app

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/plan"
	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// capPlan is a plan answer of n paths under 8 MB, the largest the data
// API's client reads: a custom plan that lists far more than any file
// selects.
func capPlan(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"plan":{"name":"AT_THE_CAP"},"apiEndpoint":{"btc":{"exchange-flows":{"reserve":{"day":"P0D","hour":"P1Y"}}`)
	for i := range n {
		switch {
		case i == 0:
			b.WriteString(`},"asset000":{"cat":{`) // btc closed
		case i%2000 == 0:
			fmt.Fprintf(&b, `}},"asset%03d":{"cat":{`, i/2000)
		default:
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"m%05d":{"day":"P0D","hour":"P1Y"}`, i)
	}
	b.WriteString(`}}},"apiRateLimit":{"token":600,"window":"minute"}}`)
	return b.Bytes()
}

// residentMB is the process's resident memory in MB after a collection
// that returns what it freed to the system, and its heap in use.
func residentMB(tb testing.TB) (rss, heap float64) {
	debug.FreeOSMemory()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		tb.Skip("no /proc/self/status: resident memory is read on Linux")
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return float64(kb) / 1024, float64(m.HeapInuse) / 1e6
		}
	}
	tb.Fatal("no VmRSS in /proc/self/status")
	return 0, 0
}

// BenchmarkPlanAtItsCap: the exporter as a process runs it, its key's
// plan answered first as the fake's (a few hundred paths), then as a
// custom plan of 200 000 paths just under the 8 MB the client reads: the
// resident memory and heap the second holds above the first, in MB,
// steady (after the start, the plan read and the expansion). The goal
// is at most 50 MB.
//
//	go test -run '^$' -bench PlanAtItsCap -benchtime 1x ./app/
func BenchmarkPlanAtItsCap(b *testing.B) {
	body := capPlan(200_000)
	if len(body) >= 8<<20 || len(body) < 7_000_000 {
		b.Fatalf("the plan at the cap is %d bytes", len(body))
	}
	var big atomic.Bool
	up := testtool.StartFake(b, fakeapi.Options{Now: time.Now}, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == plan.Path && big.Load() {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write(body)
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	dir := b.TempDir()
	cfgFile, tokenFile := filepath.Join(dir, "onchain.yml"), filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(testtool.DataToken+"\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(cfgFile, fmt.Appendf(nil, `
data:
  url: %q
  token_file: %q
  metrics:
    - path: /v1/btc/exchange-flows/reserve
      window: day
    - path: /v1/btc/exchange-flows/reserve
      window: hour
`, up.Srv.URL, tokenFile), 0o600); err != nil {
		b.Fatal(err)
	}
	run := func(name string) (rss, heap float64) {
		logs := &testtool.LogBuffer{}
		o := flags{config: cfgFile}.options(logs)
		storage := b.TempDir()
		o.StoragePath, o.StorageSet = storage, true
		a, err := New(o)
		if err != nil {
			b.Fatal(err)
		}
		if err := a.Start(); err != nil {
			b.Fatal(err)
		}
		defer a.Stop()
		want := fmt.Sprintf(`onchain_exporter_plan_info{api="data",plan=%q} 1`, name)
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
			resp, err := http.Get("http://" + a.Addr() + "/metrics")
			if err == nil {
				var buf bytes.Buffer
				_, _ = buf.ReadFrom(resp.Body)
				resp.Body.Close()
				if strings.Contains(buf.String(), want) && strings.Contains(buf.String(), `onchain_exporter_tuples{api="data"} 2`) {
					break
				}
			}
			if time.Now().After(deadline) {
				b.Fatalf("no %s after a minute:\n%s", want, logs.String())
			}
		}
		return residentMB(b)
	}
	for b.Loop() {
		big.Store(false)
		rss0, heap0 := run("PREMIUM")
		big.Store(true)
		rss1, heap1 := run("AT_THE_CAP")
		b.ReportMetric(rss1-rss0, "rss-MB-above")
		b.ReportMetric(heap1-heap0, "heap-MB-above")
		if rss1-rss0 > 50 {
			b.Errorf("a plan at its cap holds %.1f MB of resident memory above the fake's plan, want at most 50", rss1-rss0)
		}
	}
}
