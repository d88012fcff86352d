package collector

import (
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// TestScrapeAfterIdleTakesNoEngineLock: a scrape after an idle spell
// wakes the engine without its lock, so a refresh or a save that holds
// the lock (here: held by the test) never holds a scrape. The wake is
// then handled once the lock is free.
func TestScrapeAfterIdleTakesNoEngineLock(t *testing.T) {
	u := testtool.StartFake(t, fakeapi.Options{})
	reg := prometheus.NewRegistry()
	exp, err := New(testtool.Config(t, u.Srv.URL, supplyConfig), log.NewNopLogger(), reg,
		Options{Clock: u.Clock, IdleAfter: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(exp.Close)
	testtool.Scrape(t, exp, "10")
	u.Clock.Add(2 * time.Hour) // idle: the next scrape wakes the engine
	c := engines(exp)[0]
	c.mu.Lock()
	done := make(chan string)
	go func() { done <- testtool.Serve(t, exp, "10") }()
	select {
	case body := <-done:
		if valueOf(body, `onchain_supply{`) == "" {
			t.Error("the scrape served no data")
		}
	case <-time.After(10 * time.Second):
		c.mu.Unlock()
		t.Fatal("a scrape after an idle spell waited for the engine's lock")
	}
	c.mu.Unlock()
	exp.Settle()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.handled != c.wakes.Load() {
		t.Errorf("the scrape's wake was not handled: %d of %d", c.handled, c.wakes.Load())
	}
}
