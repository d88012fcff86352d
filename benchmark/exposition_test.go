package benchmark

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/onchain-exporter/onchain_exporter/collector"
	"github.com/onchain-exporter/onchain_exporter/config"
)

// The two exposition paths issue 23 asks to compare, over one exporter
// and its registry: the exporter's own writer (collector.Exporter's
// ServeHTTP, what BenchmarkWarmScrape measures), and const metrics built
// once, as a refresh would build them, served by an unchecked
// prometheus.Collector registered beside the exporter's own metrics and
// written by promhttp.

// expositionRig is an exporter over the ScrapeRig's configuration whose
// registry the test holds, and the same data series as const metrics
// behind an unchecked collector registered in that registry.
type expositionRig struct {
	exp      *collector.Exporter
	reg      *prometheus.Registry
	data     *constData
	upstream *httptest.Server
	series   int
}

// constData is an unchecked collector (Describe sends nothing) of const
// metrics built beforehand. It sends them only while on: the exporter's
// own writer gathers the same registry for its self-metrics, and must not
// serve the data twice.
type constData struct {
	metrics []prometheus.Metric
	on      atomic.Bool
}

func (c *constData) Describe(chan<- *prometheus.Desc) {}

func (c *constData) Collect(ch chan<- prometheus.Metric) {
	if !c.on.Load() {
		return
	}
	for _, m := range c.metrics {
		ch <- m
	}
}

// newExpositionRig configures tuples tuples as NewScrapeRig does (with a
// registry of the test's: ScrapeRig does not give its own), fills
// them, and builds the const metrics from what the filled exporter
// serves: every family but those of the registry (the exporter's own
// metrics, which both paths gather from it).
func newExpositionRig(tuples int) (*expositionRig, error) {
	up := staticUpstream(0)
	var b strings.Builder
	fmt.Fprintf(&b, "data:\n  url: %s\n  token_env: T\n  concurrency: 8\n  max_tuples: %d\n  metrics:\n    - path: /v1/btc/market-data/open-interest\n      window: [day, hour]\n      exchange: [", up.URL, tuples)
	for i := 0; i < tuples/2; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "exchange_%05d", i)
	}
	b.WriteString("]\n")
	cfg, err := config.Parse("exposition.yml", []byte(b.String()), func(string) string { return "bench" })
	if err != nil {
		up.Close()
		return nil, err
	}
	reg := prometheus.NewRegistry()
	exp, err := collector.New(cfg, log.NewNopLogger(), reg, collector.Options{Clock: fixedNow()})
	if err != nil {
		up.Close()
		return nil, err
	}
	r := &expositionRig{exp: exp, reg: reg, data: &constData{}, upstream: up}
	if err := reg.Register(r.data); err != nil {
		r.Close()
		return nil, err
	}
	body, _, err := scrapeWith(r.custom(), "", false, 30*time.Second, true) // the first fill
	if err != nil {
		r.Close()
		return nil, err
	}
	if r.data.metrics, err = constMetrics(body, reg); err != nil {
		r.Close()
		return nil, err
	}
	r.series = len(r.data.metrics)
	return r, nil
}

// constMetrics builds a const metric for every series of the text
// exposition body that is not in a family of reg.
func constMetrics(body []byte, reg *prometheus.Registry) ([]prometheus.Metric, error) {
	own, err := reg.Gather()
	if err != nil {
		return nil, err
	}
	skip := map[string]bool{}
	for _, mf := range own {
		skip[mf.GetName()] = true
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	var out []prometheus.Metric
	descs := map[string]*prometheus.Desc{}
	for name, mf := range fams {
		if skip[name] {
			continue
		}
		vt := prometheus.GaugeValue
		switch mf.GetType() {
		case dto.MetricType_GAUGE:
		case dto.MetricType_COUNTER:
			vt = prometheus.CounterValue
		default:
			return nil, fmt.Errorf("family %s is a %s, not a gauge or counter", name, mf.GetType())
		}
		for _, m := range mf.GetMetric() {
			var names, values []string
			for _, lp := range m.GetLabel() {
				names = append(names, lp.GetName())
				values = append(values, lp.GetValue())
			}
			key := name + "{" + strings.Join(names, ",")
			d := descs[key]
			if d == nil {
				d = prometheus.NewDesc(name, mf.GetHelp(), names, nil)
				descs[key] = d
			}
			v := m.GetGauge().GetValue()
			if vt == prometheus.CounterValue {
				v = m.GetCounter().GetValue()
			}
			out = append(out, prometheus.MustNewConstMetric(d, vt, v, values...))
		}
	}
	return out, nil
}

// custom is the exporter's own writer.
func (r *expositionRig) custom() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.data.on.Store(false)
		r.exp.ServeHTTP(w, req)
	})
}

// promhttpPath serves the registry, the const data included, through
// promhttp with opts.
func (r *expositionRig) promhttpPath(opts promhttp.HandlerOpts) http.Handler {
	h := promhttp.HandlerFor(r.reg, opts)
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.data.on.Store(true)
		h.ServeHTTP(w, req)
	})
}

// scrapeWith serves one request as Prometheus sends it (accept, and gzip
// when asked) and returns the body, decompressed, when keep is set (nil
// otherwise), and the bytes that went on the wire.
func scrapeWith(h http.Handler, accept string, gz bool, timeout time.Duration, keep bool) ([]byte, int, error) {
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", fmt.Sprintf("%.3f", timeout.Seconds()))
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if gz {
		req.Header.Set("Accept-Encoding", "gzip")
	}
	w := &sinkWriter{h: http.Header{}, keep: keep}
	h.ServeHTTP(w, req)
	if w.code != 0 && w.code != http.StatusOK {
		return nil, 0, fmt.Errorf("HTTP %d: %s", w.code, w.body.String())
	}
	if !keep {
		return nil, w.n, nil
	}
	body := w.body.Bytes()
	if w.h.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return nil, 0, err
		}
		if body, err = io.ReadAll(zr); err != nil {
			return nil, 0, err
		}
	}
	return body, w.n, nil
}

// sinkWriter counts what is written, and keeps it if asked.
type sinkWriter struct {
	h    http.Header
	code int
	n    int
	keep bool
	body bytes.Buffer
}

func (w *sinkWriter) Header() http.Header  { return w.h }
func (w *sinkWriter) WriteHeader(code int) { w.code = code }
func (w *sinkWriter) Write(p []byte) (int, error) {
	w.n += len(p)
	if w.keep || w.code >= 400 {
		w.body.Write(p)
	}
	return len(p), nil
}

// Close stops the exporter and the upstream.
func (r *expositionRig) Close() {
	r.exp.Close()
	r.upstream.Close()
}

// expositionPath is one handler compared, by name.
type expositionPath struct {
	name string
	h    http.Handler
}

// expositionPaths are the handlers compared: the exporter's writer, and
// promhttp over the const metrics, with the options issue 23 names (which
// answer Prometheus' Accept header in the text format 0.0.4) and with
// OpenMetrics enabled as well (the format the exporter's writer answers).
func (r *expositionRig) expositionPaths() []expositionPath {
	return []expositionPath{
		{"custom", r.custom()},
		{"promhttp", r.promhttpPath(promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})},
		{"promhttp-openmetrics", r.promhttpPath(promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError, EnableOpenMetrics: true})},
	}
}

// TestExpositionPathsServeTheSameSeries checks the comparison is fair:
// both paths serve the same series (names and labels) and the data
// series with the same values, as Prometheus asks for them. The full
// mode checks the 10 000 series of BenchmarkExposition.
func TestExpositionPathsServeTheSameSeries(t *testing.T) {
	tuples := 100
	if os.Getenv("ONCHAIN_BENCH_FULL") != "" {
		tuples = 2500
	}
	r, err := newExpositionRig(tuples)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.series < 2*tuples {
		t.Fatalf("%d data series for %d tuples", r.series, tuples)
	}
	var want map[string]float64
	for _, p := range r.expositionPaths() {
		body, _, err := scrapeWith(p.h, prometheusAccept, true, 10*time.Second, true)
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		got, err := seriesOf(body)
		if err != nil {
			t.Fatalf("%s: %v\n%.500s", p.name, err, body)
		}
		if want == nil {
			want = got
			continue
		}
		for id, v := range want {
			g, ok := got[id]
			switch {
			case !ok:
				t.Errorf("%s does not serve %s", p.name, id)
			case strings.HasPrefix(id, "onchain_exporter_"):
				// Self-metrics count scrapes: values move between two.
			case g != v:
				t.Errorf("%s serves %s = %v, the exporter %v", p.name, id, g, v)
			}
		}
		for id := range got {
			if _, ok := want[id]; !ok {
				t.Errorf("%s serves %s, the exporter does not", p.name, id)
			}
		}
	}
	t.Logf("%d series, %d of them data", len(want), r.series)
}

// seriesOf reads an exposition (OpenMetrics or text) into its sample
// lines: the series (name and labels as written) and the value.
func seriesOf(body []byte) (map[string]float64, error) {
	out := map[string]float64{}
	for _, l := range strings.Split(string(body), "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		i := strings.LastIndexByte(l, ' ')
		if i < 0 {
			return nil, fmt.Errorf("line %q", l)
		}
		var v float64
		if _, err := fmt.Sscan(l[i+1:], &v); err != nil {
			return nil, fmt.Errorf("line %q: %v", l, err)
		}
		// OpenMetrics writes a bucket's bound 1 as "1.0", text as "1".
		id := bound.ReplaceAllStringFunc(l[:i], func(m string) string {
			sub := bound.FindStringSubmatch(m)
			f, err := strconv.ParseFloat(sub[2], 64)
			if err != nil {
				return m
			}
			return sub[1] + `="` + strconv.FormatFloat(f, 'g', -1, 64) + `"`
		})
		out[id] = v
	}
	return out, nil
}

var bound = regexp.MustCompile(`\b(le|quantile)="([^"]*)"`)

// BenchmarkExposition serves the warm scrape of 10 000 series, as
// Prometheus asks for it (its Accept header, gzip), through each
// exposition path in turn, in one run over one exporter: p50, p99,
// allocations and bytes per scrape, and the bytes on the wire. The
// identity sub-benchmarks leave gzip out, as BenchmarkWarmScrape does.
func BenchmarkExposition(b *testing.B) {
	r, err := newExpositionRig(2500) // 2500 tuples x 4 series
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	for _, enc := range []string{"gzip", "identity"} {
		for _, p := range r.expositionPaths() {
			b.Run(p.name+"/"+enc, func(b *testing.B) {
				gz := enc == "gzip"
				_, wire, err := scrapeWith(p.h, prometheusAccept, gz, 10*time.Second, false)
				if err != nil {
					b.Fatal(err)
				}
				durations := make([]time.Duration, 0, b.N)
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					start := time.Now()
					if _, _, err := scrapeWith(p.h, prometheusAccept, gz, 10*time.Second, false); err != nil {
						b.Fatal(err)
					}
					durations = append(durations, time.Since(start))
				}
				b.StopTimer()
				b.ReportMetric(Percentile(durations, 0.5), "p50-ms")
				b.ReportMetric(Percentile(durations, 0.99), "p99-ms")
				b.ReportMetric(float64(wire)/1000, "wire-kB")
				b.ReportMetric(float64(r.series), "const-series")
			})
		}
	}
}
