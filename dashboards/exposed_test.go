package dashboards

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/app"
	"github.com/onchain-exporter/onchain_exporter/cluster"
	"github.com/onchain-exporter/onchain_exporter/collector"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/demo"
	expander "github.com/onchain-exporter/onchain_exporter/expand"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// Series Prometheus itself writes for every target or rule; queries may
// use them beside what the exporter exposes.
var prometheusSynthesized = map[string]bool{
	"up": true, "scrape_duration_seconds": true, "scrape_samples_scraped": true,
	"scrape_samples_post_metric_relabeling": true, "scrape_series_added": true,
	"ALERTS": true, "ALERTS_FOR_STATE": true,
}

var (
	exposedOnce  sync.Once
	exposedNames map[string]bool
	exposedErr   string
)

// exposed returns the names of every family the exporter exposes, read
// from real scrapes: the exporter serving its demo (package app, main's wiring,
// healthy upstream), then exporters on the demo configuration against the
// demo upstream failing in the ways that create the families only errors
// create (error and pause counters, quota gauges, series the plan
// refuses), and the expander's families with a pattern entry added. A
// family a query names but no scrape shows is a metric the exporter does
// not have (any more).
func exposed(t *testing.T) map[string]bool {
	t.Helper()
	exposedOnce.Do(func() {
		exposedNames = map[string]bool{}
		exposedErr = scrapeApp(exposedNames)
		if exposedErr == "" {
			exposedErr = scrapeFaults(exposedNames)
		}
		if exposedErr == "" {
			exposedErr = addSignalFamilies(exposedNames) // signals_test.go
		}
		if exposedErr == "" {
			exposedErr = gatherPattern(exposedNames)
		}
	})
	if exposedErr != "" {
		t.Fatal(exposedErr)
	}
	return exposedNames
}

// scrapeApp runs the exporter (package app, as main wires it) with --demo
// alone and as a cluster of one (the families of cluster mode), and
// scrapes each twice (the second scrape answers from the cache).
func scrapeApp(names map[string]bool) string {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if msg := scrapeDemo(ctx, names); msg != "" {
		return msg
	}
	gossip, err := freeAddr()
	if err != nil {
		return err.Error()
	}
	return scrapeDemo(ctx, names, "--cluster.listen-address="+gossip, "--cluster.label=demo")
}

// freeAddr returns a loopback address with a port free a moment ago.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// scrapeDemo runs the exporter with --demo and the cluster flags args,
// and scrapes it twice.
func scrapeDemo(ctx context.Context, names map[string]bool, clusterArgs ...string) string {
	o := app.DefaultOptions()
	o.Demo = true
	addrs := []string{"127.0.0.1:0"}
	o.Web.WebListenAddresses = &addrs
	flags := kingpin.New("onchain_exporter", "")
	o.Cluster = cluster.AddFlags(flags)
	if _, err := flags.Parse(clusterArgs); err != nil {
		return err.Error()
	}
	var logs testtool.LogBuffer
	o.Logger, o.Slogger = app.NewLoggers(&logs, "info", "logfmt")
	a, err := app.New(o)
	if err != nil {
		return fmt.Sprintf("app.New: %v\n%s", err, logs.String())
	}
	defer a.Stop()
	if err := a.Start(); err != nil {
		return fmt.Sprintf("app.Start: %v\n%s", err, logs.String())
	}
	for range 2 {
		body, err := getWhenUp(ctx, "http://"+a.Addr()+"/metrics")
		if err != nil {
			return fmt.Sprintf("scraping the demo: %v\n%s", err, logs.String())
		}
		for n := range familyNames(bytes.NewReader(body)) {
			names[n] = true
		}
	}
	return ""
}

// getWhenUp fetches url, retrying until the server answers or ctx ends.
func getWhenUp(ctx context.Context, url string) ([]byte, error) {
	for {
		resp, err := http.Get(url)
		if err == nil {
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return nil, fmt.Errorf("%s: %s", url, resp.Status)
			}
			return io.ReadAll(resp.Body)
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// scrapeFaults scrapes exporters on the demo configuration while the demo
// upstream fails. A new exporter per fault: its first scrape calls
// upstream for every tuple, so the fault is met at once.
func scrapeFaults(names map[string]bool) string {
	d, err := demo.Start(log.NewNopLogger())
	if err != nil {
		return "demo.Start: " + err.Error()
	}
	defer d.Close()
	faults := []struct {
		name  string
		setup func()
	}{
		{"unauthorized", func() { d.Fake.SetFault("", fakeapi.Fault{Kind: fakeapi.Unauthorized}) }},
		{"server errors", func() { d.Fake.SetFault("", fakeapi.Fault{Kind: fakeapi.Status500}) }},
		{"daily quota used", func() { d.Fake.SetConsensusError("DAILY_LIMIT_EXCEEDED") }},
		{"refused by the plan", func() { d.Fake.SetConsensusError("PLAN_REQUIRED") }},
	}
	for _, f := range faults {
		d.Fake.ClearFaults()
		d.Fake.SetConsensusError("")
		f.setup()
		exp, err := collector.New(d.Config, log.NewNopLogger(), prometheus.NewRegistry())
		if err != nil {
			return "collector.New: " + err.Error()
		}
		rec := httptest.NewRecorder()
		exp.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		exp.Close()
		if rec.Code != http.StatusOK {
			return f.name + ": scrape: " + rec.Result().Status + ": " + rec.Body.String()
		}
		for n := range familyNames(rec.Body) {
			names[n] = true
		}
	}
	return ""
}

// gatherPattern expands the demo configuration with a pattern entry
// added, as the exporter does at start, and gathers the expander's
// families: the demo names every path, and a pattern's families exist
// only with a pattern.
func gatherPattern(names map[string]bool) string {
	d, err := demo.Start(log.NewNopLogger())
	if err != nil {
		return "demo.Start: " + err.Error()
	}
	defer d.Close()
	yml := strings.Replace(string(demo.YAML(d.URL)), "  metrics:\n", "  metrics:\n    - path: /v1/btc/market-data/*\n      window: coarsest\n      coarsen: true\n", 1)
	cfg, err := config.Parse("demo.yml", []byte(yml), demo.Getenv)
	if err != nil {
		return "the demo configuration with a pattern: " + err.Error()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	x := expander.New(log.NewNopLogger())
	if _, err := x.Start(ctx, cfg); err != nil {
		return "expanding the demo configuration with a pattern: " + err.Error()
	}
	reg := prometheus.NewRegistry()
	if err := reg.Register(x); err != nil {
		return err.Error()
	}
	mfs, err := reg.Gather()
	if err != nil {
		return err.Error()
	}
	for _, mf := range mfs {
		names[mf.GetName()] = true
	}
	return ""
}

// familyNames reads the family names of a text exposition from its TYPE
// lines.
func familyNames(r io.Reader) map[string]bool {
	names := map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 4 && f[0] == "#" && f[1] == "TYPE" {
			names[f[2]] = true
		}
	}
	return names
}

// familyOf maps a series name to the family it belongs to: a histogram's
// or summary's _bucket, _sum and _count series to the family itself.
func familyOf(name string, exposed map[string]bool) string {
	if exposed[name] {
		return name
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && exposed[base] {
			return base
		}
	}
	return ""
}

func TestDemoScrapeShowsErrorFamilies(t *testing.T) {
	names := exposed(t)
	// The scenarios exist to bring these out; without them every query on
	// errors, pauses, quota, refusals or patterns would be reported as
	// naming unknown metrics.
	for _, n := range []string{"onchain_exporter_api_errors_total", "onchain_exporter_api_paused", "onchain_exporter_daily_quota_used",
		"onchain_exporter_query_refused", "onchain_exporter_pattern_tuples"} {
		if !names[n] {
			t.Errorf("no scenario of the demo scrape exposes %s", n)
		}
	}
}
