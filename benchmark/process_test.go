package benchmark

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkProcess runs the exporter binary on 2 500 tuples (10 000
// series) and scrapes it over HTTP as Prometheus would: it reports the
// scrape time and the resident memory of the exporter process itself.
func BenchmarkProcess(b *testing.B) {
	dir := b.TempDir()
	bin := filepath.Join(dir, "onchain_exporter")
	build := exec.Command("go", "build", "-o", bin, "github.com/onchain-exporter/onchain_exporter")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
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
	addr := freeAddr(b)
	cmd := exec.Command(bin, "--config.file="+cfgFile, "--web.listen-address="+addr, "--log.level=warn")
	cmd.Env = append(os.Environ(), "BENCH_TOKEN=bench")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	url := "http://" + addr + "/metrics"
	// The client asks for gzip, as Prometheus does, and counts the series
	// as the body streams in.
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
	if rss, err := rssOf("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/status"); err == nil {
		b.ReportMetric(float64(rss)/(1<<20), "rss-MiB")
	} else {
		b.Log(err)
	}
}

func freeAddr(b *testing.B) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
