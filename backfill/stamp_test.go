package backfill

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/collector"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/testtool"
	"github.com/onchain-exporter/onchain_exporter/testtool/simclock"
)

// TestStampAgainstLiveScrapes measures what --sample-time=end means: a
// live exporter against the fake (its default publication lags: day rows
// 30 min after their interval ends, hour rows 5 min, blocks at once) is
// scraped every 30 s of simulated time for four days, and the time each
// row is first served is set against the time the backfill stamps it
// with. The stamp is never after the first scrape that served the row
// (a backfilled history does not show a row later than the live exporter
// did) and before it by about the publication lag: the median is the lag
// plus what the live schedule adds, at most 10 % of the window.
func TestStampAgainstLiveScrapes(t *testing.T) {
	clock := simclock.New(time.Date(2026, 11, 18, 0, 7, 0, 0, time.UTC))
	up := testtool.StartFake(t, fakeapi.Options{Now: clock.Now})
	cfg := up.Config(t, dataConfig("    - path: /v1/btc/network-data/supply\n      window: [day, hour, block]\n"))
	exp, err := collector.New(cfg, log.NewNopLogger(), prometheus.NewRegistry(), collector.Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer exp.Close()

	lags := map[string][]time.Duration{} // window -> first served minus the stamp
	last := map[string]string{}
	end := clock.Now().Add(96 * time.Hour)
	for ; clock.Now().Before(end); clock.Add(30 * time.Second) {
		// What the engine had due by now is done, as in real time.
		body := testtool.Scrape(t, exp, "")
		for _, line := range strings.Split(body, "\n") {
			if !strings.HasPrefix(line, "onchain_data_timestamp_seconds{") {
				continue
			}
			window := line[strings.Index(line, `window="`)+8:]
			window = window[:strings.IndexByte(window, '"')]
			value := line[strings.LastIndexByte(line, ' ')+1:]
			if last[window] == value {
				continue
			}
			first := last[window] == ""
			last[window] = value
			if first {
				continue // served at start, not when it appeared
			}
			sec, _ := strconv.ParseFloat(value, 64)
			row := time.Unix(int64(sec), 0)
			tuple := &config.Tuple{Window: window}
			stamp := row.Add(StampEnd.shift(tuple, 0))
			lags[window] = append(lags[window], clock.Now().Sub(stamp))
		}
	}
	for window, bound := range map[string]time.Duration{"day": 30*time.Minute + 144*time.Minute, "hour": 5*time.Minute + 6*time.Minute, "block": time.Minute} {
		ls := lags[window]
		if len(ls) < 2 {
			t.Fatalf("%s: %d rows seen appearing", window, len(ls))
		}
		slices.Sort(ls)
		if med := ls[len(ls)/2]; ls[0] < 0 || med > bound {
			t.Errorf("%s: first served %s (min) %s (median) after the stamp, want at least 0 and a median of at most %s", window, ls[0], med, bound)
		}
		t.Logf("%s: %d rows first served %s (min) %s (median) %s (max) after their backfill stamp", window, len(ls), ls[0], ls[len(ls)/2], ls[len(ls)-1])
	}
}
