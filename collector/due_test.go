package collector

import (
	"strconv"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// The due time of a windowed endpoint's next row, over three simulated
// days of hour and day rows whose delays jitter by ±50 %: never passed
// while the provider keeps its habit (no false late row), and passed
// soon after the rows stop coming on time (the hour rows 3 h late from
// day 3): the late row is known within the tolerance and a scrape, long
// before the row comes.
func TestRowDueTime(t *testing.T) {
	// Three simulated days, on its own clock and fake.
	t.Parallel()
	slowFrom := testtool.Clock().Now().Add(3 * 24 * time.Hour) // the fake's clock starts where testtool.Clock does
	e := newEnv(t, `
data:
  url: {{URL}}
  token_env: T
  metrics:
    - path: /v1/btc/network-data/supply
      window: [hour, day]
`, fakeapi.Options{Publish: map[string]fakeapi.Delay{
		"hour": {Base: 4 * time.Minute, Jitter: 0.5, DropAt: slowFrom, After: 3 * time.Hour},
		"day":  {Base: 50 * time.Minute, Jitter: 0.5},
	}})
	c := e.clock
	e.scrape("10")
	start := c.Now()
	firstSlow := slowFrom.Truncate(time.Hour).Add(time.Hour) // the first hour row closing after slowFrom
	due := func(body, window string) time.Time {
		v := seriesValue(body, "onchain_exporter_row_due_timestamp_seconds", "endpoint", "/v1/btc/network-data/supply", "window", window)
		if v == "" {
			// Absent until two rows were found on time.
			if c.Now().Sub(start) > 5*24*time.Hour/2 && window == "day" || c.Now().Sub(start) > 6*time.Hour && window == "hour" {
				t.Fatalf("%s: still no due time for %s", c.Now().Format(time.RFC3339), window)
			}
			return c.Now().Add(time.Hour) // not late
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			t.Fatalf("due time for %s: %q", window, v)
		}
		return time.Unix(0, int64(f*1e9))
	}
	var detected time.Duration
	for c.Now().Before(slowFrom.Add(6 * time.Hour)) {
		c.Add(time.Minute)
		body := e.scrape("10")
		now := c.Now()
		for _, w := range []string{"hour", "day"} {
			late := now.Sub(due(body, w))
			switch {
			case late <= 0:
			case w == "hour" && !now.Before(firstSlow):
				// The first slow hour row closes at firstSlow; on its
				// habit it came by 6 minutes after (4 ± 50 %).
				if detected == 0 {
					detected = now.Sub(firstSlow.Add(6 * time.Minute))
				}
			default:
				t.Fatalf("%s: the %s row is %v past its due time while the provider keeps its habit", now.Format(time.RFC3339), w, late)
			}
		}
	}
	if detected <= 0 || detected > 15*time.Minute {
		t.Errorf("the late hour row was known %v after its latest habitual publication, want within 15 minutes", detected)
	}
	t.Logf("a late hour row known %v after its latest habitual publication", detected)
}
