package upstream

import (
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/config"
)

// TestRateLimitKeepsEveryMinuteUnderTheLimit drives the limiter of
// rate_limit greedily through simulated minutes: no 60 s window sees more
// requests than rate_limit, and a steady client gets close to it.
func TestRateLimitKeepsEveryMinuteUnderTheLimit(t *testing.T) {
	for _, rpm := range []float64{0.5, 1, 30, 60, 90, 120, 600, 1000} {
		u := New(&config.API{Name: config.APIData, Concurrency: 1, Timeout: time.Second, RateLimit: rpm},
			NewMetrics(prometheus.NewRegistry()), time.Now, log.NewNopLogger())
		if u.limiter == nil {
			t.Fatalf("rate_limit %v: no limiter", rpm)
		}
		start := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
		const minutes = 5
		var sent []time.Time
		for ms := 0; ms < minutes*60*1000; ms += 5 {
			now := start.Add(time.Duration(ms) * time.Millisecond)
			for u.limiter.AllowN(now, 1) {
				sent = append(sent, now)
			}
		}
		worst := 0
		for i, j := 0, 0; i < len(sent); i++ {
			for sent[i].Sub(sent[j]) >= time.Minute {
				j++
			}
			worst = max(worst, i-j+1)
		}
		if float64(worst) > max(rpm, 1) {
			t.Errorf("rate_limit %v: %d requests in one 60 s window", rpm, worst)
		}
		if want := rpm * minutes * 0.95; float64(len(sent)) < want {
			t.Errorf("rate_limit %v: only %d requests in %d minutes", rpm, len(sent), minutes)
		}
	}
}
