package collector

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/onchain-exporter/onchain_exporter/fakeapi"
)

// leakEnv is an env whose upstream and exporter the test stops itself
// (stop), so that goroutines can be checked after both are gone.
func leakEnv(t *testing.T, yml string) (e *env, stop func()) {
	t.Helper()
	e = newEnv(t, yml, fakeapi.Options{})
	return e, func() {
		e.exp.Close()
		e.srv.Close()
	}
}

// withDataMetric adds metrics entries to the data section of faultConfig.
func withDataMetric(entries string) string {
	return strings.Replace(faultConfig, "\nindicator:\n", entries+"indicator:\n", 1)
}

// TestNoGoroutineLeftBehind runs scrapes under faults that leave refreshes
// in flight when the scrape gives up, reloads, and closes: afterwards not
// one goroutine of the exporter, its clients or the upstream remains.
func TestNoGoroutineLeftBehind(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	e, stop := leakEnv(t, faultConfig)
	for _, f := range []fakeapi.Fault{
		{Kind: fakeapi.Slow, Delay: 20 * time.Second},
		{Kind: fakeapi.SlowBody, Delay: 20 * time.Second},
		{Kind: fakeapi.ConnReset},
		{Kind: fakeapi.Status500},
		{Kind: fakeapi.HugeBody},
		{Kind: fakeapi.Redirect, Location: "http://127.0.0.1:1/"},
		{Kind: fakeapi.TruncatedJSON},
	} {
		e.fake.SetFault("", f)
		e.clock.Add(2 * time.Minute)
		e.serve("0.7") // gives up after 200 ms: refreshes stay in flight
	}
	// A reload while refreshes are in flight: the old collectors are
	// closed and their refreshes end.
	e.fake.SetFault("", fakeapi.Fault{Kind: fakeapi.Slow, Delay: 20 * time.Second})
	e.clock.Add(2 * time.Minute)
	e.serve("0.7")
	cfg := e.parse(withDataMetric(`
    - path: /v1/btc/network-indicator/pnl-utxo
      cache_ttl: 1m
`))
	if err := e.exp.ApplyConfig(cfg); err != nil {
		t.Fatal(err)
	}
	e.serve("0.7")
	waitIdle(t, e.exp)
	e.fake.ClearFaults()
	e.clock.Add(time.Hour)
	body := e.scrape("5")
	if len(lines(body, "onchain_utxo_profit_amount{")) != 1 {
		t.Errorf("the reloaded config is not served:\n%s", strings.Join(lines(body, "onchain_"), "\n"))
	}
	e.fake.SetFault("", fakeapi.Fault{Kind: fakeapi.Slow, Delay: 20 * time.Second})
	e.clock.Add(2 * time.Minute)
	e.serve("0.7") // and Close with refreshes in flight
	start := time.Now()
	stop()
	// Causal: a Close that waited for the refreshes would take their
	// 20 s.
	if took := time.Since(start); took >= 20*time.Second {
		t.Errorf("Close took %v with refreshes in flight: it waited for them", took)
	}
	goleak.VerifyNone(t, ignore)
}

// TestManyScrapesStayFlat runs 10 000 scrapes of a small config under
// faults that change every 50 scrapes (none of them waits in real time:
// the upstream timeout leaves no room for a retry), the clock moving 20 s a scrape so
// that refreshes keep happening: goroutines and heap in use end where they
// were after warming up.
func TestManyScrapesStayFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("10 000 scrapes")
	}
	e, stop := leakEnv(t, `
data:
  url: "{{URL}}"
  token_env: T
  timeout: 500ms
  max_staleness: 5m
  metrics:
    - path: /v1/btc/network-data/supply
      window: day
      cache_ttl: 1m
    - path: /v1/btc/market-data/open-interest
      window: hour
      exchange: binance
      cache_ttl: 1m
`)
	defer stop()
	faults := []fakeapi.Fault{
		{},
		{Kind: fakeapi.Status500},
		{Kind: fakeapi.Status503},
		{Kind: fakeapi.InvalidJSON},
		{},
		{Kind: fakeapi.TruncatedJSON},
		{Kind: fakeapi.EmptyData},
		{Kind: fakeapi.StatusMismatch},
		{},
		{Kind: fakeapi.NumbersAsStrings},
		{Kind: fakeapi.NonFinite},
		{Kind: fakeapi.Unauthorized},
		{},
		{Kind: fakeapi.TooManyRequests, RetryAfter: 30},
		{Kind: fakeapi.ConnReset},
		{Kind: fakeapi.Redirect, Location: "http://127.0.0.1:1/"},
	}
	const scrapes, warm = 10000, 1000
	var goroutines int
	var heap uint64
	var served int
	for i := range scrapes {
		if i%50 == 0 {
			e.fake.SetFault("", faults[(i/50)%len(faults)])
		}
		if i == warm {
			waitIdle(t, e.exp)
			goroutines, heap = settle()
		}
		e.clock.Add(20 * time.Second)
		if strings.Contains(e.serve("5"), "onchain_supply{") {
			served++
		}
	}
	waitIdle(t, e.exp)
	g, h := settle()
	t.Logf("after %d scrapes: goroutines %d -> %d, heap in use %.1f -> %.1f MiB; data served in %d",
		scrapes, goroutines, g, float64(heap)/(1<<20), float64(h)/(1<<20), served)
	if g > goroutines+10 {
		t.Errorf("goroutines grew from %d to %d", goroutines, g)
	}
	if h > heap+16<<20 && h > heap*3/2 {
		t.Errorf("heap in use grew from %.1f to %.1f MiB", float64(heap)/(1<<20), float64(h)/(1<<20))
	}
	if served < scrapes/10 {
		t.Errorf("data served in only %d of %d scrapes: the faults were not interleaved with health", served, scrapes)
	}
	if got := e.fake.Calls("data"); got < scrapes/10 {
		t.Errorf("only %d upstream calls: refreshes did not keep happening", got)
	}
}

// settle collects garbage and lets short-lived goroutines end, then reports
// the goroutine count and the heap in use.
func settle() (int, uint64) {
	var ms runtime.MemStats
	n := runtime.NumGoroutine()
	for range 20 {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
		if m := runtime.NumGoroutine(); m == n {
			break
		} else {
			n = m
		}
	}
	runtime.ReadMemStats(&ms)
	return n, ms.HeapInuse
}
