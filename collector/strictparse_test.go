package collector

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/common/expfmt"

	"github.com/onchain-exporter/onchain_exporter/demo"
	"github.com/onchain-exporter/onchain_exporter/expand"
	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// demoEnv runs the embedded demo with the registry main builds: the Go
// runtime and process collectors beside the exporter's own families.
func demoEnv(t *testing.T) *env {
	t.Helper()
	d, err := demo.Start(log.NewNopLogger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	cfg, err := expand.New(log.NewNopLogger()).Expand(context.Background(), d.Config)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	exp, err := New(cfg, log.NewNopLogger(), reg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(exp.Close)
	return &env{t: t, exp: exp, reg: reg}
}

// Every OpenMetrics answer passes the reference parser, the Go runtime's
// families included; the counter go_memstats_alloc_bytes_total, whose
// OpenMetrics family name is the gauge go_memstats_alloc_bytes's
// (client_golang#829), comes as a family of type unknown with its samples
// named as in the text format, where both keep their types.
func TestOpenMetricsPassesTheReferenceParser(t *testing.T) {
	python := testtool.StrictPython(t)
	e := demoEnv(t)
	e.scrape("30") // the first fill
	const accept = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"

	for _, accept := range []string{accept, "application/openmetrics-text;version=0.0.1"} {
		ct, om := e.scrapeAs(accept)
		if !strings.HasPrefix(ct, "application/openmetrics-text") {
			t.Fatalf("Accept %s: Content-Type %q", accept, ct)
		}
		fams, complaint := testtool.ParseOpenMetrics(t, python, om)
		if complaint != "" {
			t.Fatalf("Accept %s: the reference parser refuses the answer: %s", accept, complaint)
		}
		types := map[string]string{}
		samples := map[string]bool{}
		for _, f := range fams {
			types[f.Name] = f.Type
			for _, s := range f.Samples {
				samples[s] = true
			}
		}
		if types["go_memstats_alloc_bytes"] != "gauge" || types["go_memstats_alloc_bytes_total"] != "unknown" {
			t.Errorf("go_memstats_alloc_bytes: %q, go_memstats_alloc_bytes_total: %q; want gauge and unknown", types["go_memstats_alloc_bytes"], types["go_memstats_alloc_bytes_total"])
		}
		if types["go_gc_duration_seconds"] != "summary" || types["process_cpu_seconds"] != "counter" || types["onchain_exporter_upstream_requests"] != "counter" {
			t.Errorf("families lost their types: go_gc_duration_seconds %q, process_cpu_seconds %q, onchain_exporter_upstream_requests %q",
				types["go_gc_duration_seconds"], types["process_cpu_seconds"], types["onchain_exporter_upstream_requests"])
		}

		// Every sample name of the text format is in the OpenMetrics
		// answer, the Go runtime's and the process's among them.
		_, text := e.scrapeAs("text/plain;version=0.0.4")
		var missing []string
		goFams := 0
		for name, mf := range testtool.Families(t, text) {
			if strings.HasPrefix(name, "go_") {
				goFams++
			}
			want := name
			switch mf.GetType().String() {
			case "SUMMARY", "HISTOGRAM":
				want = name + "_count"
			}
			if !samples[want] {
				missing = append(missing, want)
			}
		}
		slices.Sort(missing)
		if len(missing) > 0 {
			t.Errorf("Accept %s: samples of the text format missing from OpenMetrics: %v", accept, missing)
		}
		if goFams < 20 {
			t.Errorf("only %d go_ families in the text format", goFams)
		}
	}
}

// The text format keeps both of the clashing pair with their own types:
// nothing of the Go collector's is lost there.
func TestTextFormatKeepsTheGoCollectorsTypes(t *testing.T) {
	e := demoEnv(t)
	_, text := e.scrapeAs("text/plain;version=0.0.4")
	for _, want := range []string{
		"# TYPE go_memstats_alloc_bytes gauge\n",
		"# TYPE go_memstats_alloc_bytes_total counter\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the text format lacks %q", want)
		}
	}
}

// The parser this test relies on refuses what the client library writes
// for the Go collector on its own: the check can fail.
func TestReferenceParserRefusesTheClash(t *testing.T) {
	python := testtool.StrictPython(t)
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector())
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToOpenMetrics(&b, mf); err != nil {
			t.Fatal(err)
		}
	}
	b.WriteString("# EOF\n")
	if _, complaint := testtool.ParseOpenMetrics(t, python, b.String()); !strings.Contains(complaint, "go_memstats_alloc_bytes") {
		t.Errorf("the library's own OpenMetrics of the Go collector: parser complaint %q, want one naming go_memstats_alloc_bytes", complaint)
	}
}
