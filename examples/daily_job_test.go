package examples

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/collector"
	"github.com/onchain-exporter/onchain_exporter/demo"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// TestDailyJobDropsEveryExporterWideFamily: prometheus.yml's second job
// scrapes the same process for the indicator and consensus collectors, and
// drops the families that do not depend on collect[] (the first job keeps
// them). A family the daily scrape shows with series of the data API, or
// exactly as the data scrape shows it, is such a family: the drop regex
// must match it, or every sum over it counts twice and its alerts fire
// twice. The exposition is the demo exporter's, every family in it.
func TestDailyJobDropsEveryExporterWideFamily(t *testing.T) {
	var cfg struct {
		ScrapeConfigs []struct {
			JobName              string `yaml:"job_name"`
			MetricRelabelConfigs []struct {
				Regex  string `yaml:"regex"`
				Action string `yaml:"action"`
			} `yaml:"metric_relabel_configs"`
		} `yaml:"scrape_configs"`
	}
	decodeFile(t, "prometheus.yml", &cfg)
	var drop *regexp.Regexp
	for _, sc := range cfg.ScrapeConfigs {
		for _, r := range sc.MetricRelabelConfigs {
			if r.Action == "drop" {
				drop = regexp.MustCompile("^(?:" + r.Regex + ")$")
			}
		}
	}
	if drop == nil {
		t.Fatal("prometheus.yml: no job drops the exporter-wide families")
	}

	d, err := demo.Listen(log.NewNopLogger(), "127.0.0.1:0", fakeapi.Options{Dialect: fakeapi.DialectA})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	exp, err := collector.New(d.Config, log.NewNopLogger(), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	defer exp.Close()
	scrape := func(query string) map[string]string {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, "/metrics?"+query, nil)
		req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", "20")
		exp.ServeHTTP(rec, req)
		fams := testtool.Families(t, rec.Body.String())
		out := map[string]string{}
		for name, f := range fams {
			var b strings.Builder
			for _, m := range f.GetMetric() {
				for _, l := range m.GetLabel() {
					b.WriteString(l.GetName() + "=" + l.GetValue() + ",")
				}
				b.WriteString("\n")
			}
			out[name] = b.String()
		}
		return out
	}
	data := scrape("collect[]=data")
	daily := scrape("collect[]=indicator&collect[]=consensus")
	if len(daily) < 10 {
		t.Fatalf("the daily scrape shows only %d families", len(daily))
	}
	for name, series := range daily {
		wide := strings.Contains(series, "api=data,") || (data[name] != "" && data[name] == series && strings.HasPrefix(name, "onchain_exporter_"))
		if wide && !drop.MatchString(name) {
			t.Errorf("%s does not depend on collect[], and the daily job keeps it: add it to the drop regex", name)
		}
	}
}
