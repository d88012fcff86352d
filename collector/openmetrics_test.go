package collector

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"

	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// scrapeAs scrapes with an Accept header and returns the Content-Type and
// the body.
func (e *env) scrapeAs(accept string) (string, string) {
	e.t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Accept", accept)
	rec := httptest.NewRecorder()
	e.exp.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		e.t.Fatalf("scrape: HTTP %d: %s", rec.Code, rec.Body.String())
	}
	return rec.Header().Get("Content-Type"), rec.Body.String()
}

// TestOpenMetricsWhenAsked: a scraper that asks for OpenMetrics (as
// Prometheus does by default) gets it: the same series as the text
// format, each family's HELP and TYPE lines as the client library writes
// them in OpenMetrics (counters named without _total), and # EOF last.
// One that asks for nothing or for text gets the text format.
func TestOpenMetricsWhenAsked(t *testing.T) {
	e := newEnv(t, supplyConfig, fakeapi.Options{})
	e.scrape("10") // the first fill
	const prometheus = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"
	omType, om := e.scrapeAs(prometheus)
	textType, text := e.scrapeAs("text/plain;version=0.0.4")
	if !strings.HasPrefix(omType, "application/openmetrics-text; version=1.0.0") {
		t.Errorf("Content-Type %q for Prometheus's Accept, want OpenMetrics 1.0.0", omType)
	}
	if !strings.HasPrefix(textType, "text/plain; version=0.0.4") {
		t.Errorf("Content-Type %q for text/plain, want the text format", textType)
	}
	if _, none := e.scrapeAs(""); strings.Contains(none, "# EOF") {
		t.Error("no Accept header: OpenMetrics, want the text format")
	}
	if !strings.HasSuffix(om, "\n# EOF\n") || strings.Count(om, "# EOF") != 1 {
		t.Errorf("the OpenMetrics answer does not end with one # EOF:\n...%s", om[max(0, len(om)-200):])
	}
	if strings.Contains(text, "# EOF") {
		t.Error("the text answer carries # EOF")
	}

	// The same series, line for line, for the data families (our own
	// families are written by the client library in either format, and
	// their values may have moved between the two scrapes).
	data := func(body string) []string {
		var out []string
		for _, l := range strings.Split(body, "\n") {
			if strings.HasPrefix(l, "onchain_") && !strings.HasPrefix(l, "onchain_exporter_") {
				out = append(out, l)
			}
		}
		slices.Sort(out)
		return out
	}
	if got, want := data(om), data(text); len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("OpenMetrics series differ from the text format's:\n%s\n--- text:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// Every family's HELP and TYPE lines are the library's own, in
	// OpenMetrics, for the family read back from the text format.
	fams := testtool.Families(t, text)
	checked := 0
	for name, mf := range fams {
		var b bytes.Buffer
		if _, err := expfmt.MetricFamilyToOpenMetrics(&b, mf); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		header := strings.SplitAfterN(b.String(), "\n", 3)
		for _, l := range header[:2] {
			if !strings.HasPrefix(l, "# ") || !strings.Contains(om, "\n"+l) && !strings.HasPrefix(om, l) {
				t.Errorf("%s: the OpenMetrics answer lacks the library's %q", name, l)
			}
		}
		checked++
	}
	if checked < 10 {
		t.Errorf("only %d families checked", checked)
	}
}
