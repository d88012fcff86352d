package upstream

import (
	"net/url"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/config"
)

func TestPausesRoundTrip(t *testing.T) {
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	u, _ := url.Parse("http://127.0.0.1:1")
	a := &config.API{Name: config.APIData, URL: u, Timeout: time.Second, Concurrency: 1}
	p := NewPool(prometheus.NewRegistry(), clock, log.NewNopLogger())
	c := p.Client(a)
	if c.Identity() != Identity(a) {
		t.Fatalf("identity %q, want %q", c.Identity(), Identity(a))
	}
	c.pause(true, now.Add(time.Hour), "DAILY_LIMIT_EXCEEDED", false)
	c.pause(false, now.Add(-time.Minute), "rate_limited", false) // ended
	saved := c.Pauses()
	if len(saved) != 1 || !saved[0].Keyed || saved[0].By != "DAILY_LIMIT_EXCEEDED" || !saved[0].Until.Equal(now.Add(time.Hour)) {
		t.Fatalf("saved pauses: %+v", saved)
	}
	fresh := New(a, NewMetrics(prometheus.NewRegistry()), clock, log.NewNopLogger())
	fresh.RestorePauses(append(saved, Pause{Until: now.Add(-time.Second), By: "old"}))
	if until, by, ok := fresh.paused(true); !ok || by != "DAILY_LIMIT_EXCEEDED" || !until.Equal(now.Add(time.Hour)) {
		t.Fatalf("keyed lane after restore: %v %q %v", until, by, ok)
	}
	if _, _, ok := fresh.paused(false); ok {
		t.Fatal("a pause that had ended was restored")
	}
}
