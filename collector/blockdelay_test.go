package collector

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// A block row's time is its block's, not the start of an interval: its
// delay runs from that time, never from a spacing after it. Over six
// simulated hours of btc blocks (a row every 600 s or so), every delay
// observed and the publication delay are at least 0 and under a
// spacing, and every OpenMetrics answer passes the reference parser.
// (A block row's delay was taken from its time plus its spacing: every
// observation was about -600 s, row_delay_seconds_sum went negative
// from the second block row and the reference parser refused every
// answer after the first.)
func TestBlockRowDelaysFromTheBlocksTime(t *testing.T) {
	t.Parallel() // six simulated hours, on its own clock and fake
	python := testtool.StrictPython(t)
	e := newEnv(t, `
data:
  url: {{URL}}
  token_env: T
  metrics:
    - path: /v1/btc/network-data/supply
      window: [block, hour]
`, fakeapi.Options{})
	e.scrape("10")
	const accept = "application/openmetrics-text;version=1.0.0"
	for step := range 6 * 12 {
		e.clock.Add(5 * time.Minute)
		e.scrape("10")
		if step%12 != 11 {
			continue
		}
		_, om := e.scrapeAs(accept)
		if _, complaint := testtool.ParseOpenMetrics(t, python, om); complaint != "" {
			t.Fatalf("after %d min: the reference parser refuses the answer: %s", 5*(step+1), complaint)
		}
	}
	body := e.scrape("10")
	count := seriesValue(body, "onchain_exporter_row_delay_seconds_count", "window", "block")
	sum := seriesValue(body, "onchain_exporter_row_delay_seconds_sum", "window", "block")
	n, _ := strconv.ParseFloat(count, 64)
	s, _ := strconv.ParseFloat(sum, 64)
	if n < 20 {
		t.Fatalf("%s block rows observed in six hours, want about 36:\n%s", count, strings.Join(lines(body, "row_delay_seconds"), "\n"))
	}
	if s < 0 || s/n > 600 {
		t.Errorf("block rows' delay: %v s over %v rows (mean %.0f s), want at least 0 and under a spacing", s, n, s/n)
	}
	for _, l := range lines(body, "onchain_exporter_publication_delay_seconds{") {
		v, _ := strconv.ParseFloat(l[strings.LastIndexByte(l, ' ')+1:], 64)
		if v < 0 {
			t.Errorf("negative publication delay: %s", l)
		}
	}
}
