package testtool

import (
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/testtool/simclock"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// What the tests of several packages (collector, expand, state, main)
// share to run an exporter against the fake upstream and read its
// exposition.

// DataToken is the data API credential the tests give the fake upstream.
const DataToken = "test-data-token"

// Clock is the simulated time shared by the fake upstream, the expander
// and the exporter of a test.
func Clock() *simclock.Clock {
	return simclock.New(time.Date(2026, 11, 20, 12, 34, 56, 0, time.UTC))
}

// Lines returns the sample lines of families whose name starts with one
// of the prefixes, sorted.
func Lines(body string, prefixes ...string) []string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		for _, p := range prefixes {
			if strings.HasPrefix(l, p) {
				out = append(out, l)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

// ValueOf returns the value text of the one series line starting with
// prefix, or "" when there is none.
func ValueOf(body, prefix string) string {
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l[strings.LastIndexByte(l, ' ')+1:]
		}
	}
	return ""
}

// SeriesValue returns the value text of the first series of family whose
// labels include every k="v" pair given, or "" when there is none. Labels
// not named are ignored, so tests do not depend on the file's label union.
func SeriesValue(body, family string, pairs ...string) string {
	for _, l := range strings.Split(body, "\n") {
		if !strings.HasPrefix(l, family+"{") && !strings.HasPrefix(l, family+" ") {
			continue
		}
		match := true
		for i := 0; i+1 < len(pairs); i += 2 {
			if !strings.Contains(l, pairs[i]+`="`+pairs[i+1]+`"`) {
				match = false
				break
			}
		}
		if match {
			return l[strings.LastIndexByte(l, ' ')+1:]
		}
	}
	return ""
}

// Families parses body, a text exposition, into its metric families by
// name, with the library's own parser. It fails the test when body does
// not parse.
func Families(t testing.TB, body string) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("the exposition does not parse: %v", err)
	}
	return fams
}
