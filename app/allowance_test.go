package app

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/testtool"
	"github.com/onchain-exporter/onchain_exporter/testtool/simclock"
)

// callLog records when (on the fake's clock) each data API call of a key
// came, plan reads and discovery included: what the provider counts
// against the key's allowance.
type callLog struct {
	mu    sync.Mutex
	clock *simclock.Clock
	at    []time.Time
}

func (l *callLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v1/") {
			l.mu.Lock()
			l.at = append(l.at, l.clock.Now())
			l.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	})
}

// most is the largest number of calls in any window of length d that
// starts at or after from.
func (l *callLog) most(from time.Time, d time.Duration) (n int, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, t := range l.at {
		if t.Before(from) {
			continue
		}
		k := 0
		for _, u := range l.at[i:] {
			if u.Sub(t) < d {
				k++
			}
		}
		if k > n {
			n, at = k, t
		}
	}
	return n, at
}

// inDay is the number of calls in the UTC day of t.
func (l *callLog) inDay(t time.Time) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	day, n := t.UTC().Truncate(24*time.Hour), 0
	for _, u := range l.at {
		if u.UTC().Truncate(24 * time.Hour).Equal(day) {
			n++
		}
	}
	return n
}

// Every kind of allowance a plan can state — calls a day, an hour, a
// minute — caps what the exporter calls when the file sets neither
// rate_limit nor daily_budget: at start, after a reload and after the
// plan changes, with onchain_exporter_daily_budget_calls saying the budget in
// force. The file asks for far more than each allowance (every hour
// series of /v1/btc/**, coarsened to what the budget allows, each asked
// at once at start if nothing held it), at 00:30 UTC, when
// a budget's share of the day is smallest. What the provider would count
// is counted at the fake: calls of the data API, the plan's read and the
// listing included; each allowance's window holds at most its share
// (90 %, the rest left to the key's other uses).
func TestEveryKindOfAllowanceCapsTheCalls(t *testing.T) {
	const key = "allowance-key"
	calls := &callLog{}
	up := testtool.StartFake(t, fakeapi.Options{DataKeys: map[string]fakeapi.Tier{key: fakeapi.TierPremium}}, calls.wrap)
	calls.clock = up.Clock
	start := time.Date(2026, 11, 29, 0, 30, 0, 0, time.UTC)
	up.Clock.Set(start)
	dir := t.TempDir()
	cfgFile, tokenFile := filepath.Join(dir, "onchain.yml"), filepath.Join(dir, "token")
	writeFile(t, tokenFile, key+"\n")
	writeFile(t, cfgFile, fmt.Sprintf(`
data:
  url: %q
  token_file: %q
  metrics:
    - path: /v1/btc/**
      window: hour
      exchange: all
      coarsen: true
`, up.Srv.URL, tokenFile))

	// run moves the clock on by d a minute at a time, letting the
	// exporter do what is due at each, and scrapes it as Prometheus
	// would.
	run := func(e *exporter, d time.Duration) {
		for end := up.Clock.Now().Add(d); up.Clock.Now().Before(end); {
			up.Clock.Add(time.Minute)
			e.app.Settle()
			e.metrics()
		}
	}
	budgetShown := func(e *exporter) string {
		return strings.TrimSpace(grepLines(e.metrics(), `onchain_exporter_daily_budget_calls{api="data"}`))
	}

	// A day's allowance of 40: a budget of 35 a day (35/96 a quarter
	// hour's burst, at least one call; the 40th... left to other uses).
	up.Fake.SetPlanAnswer(fakeapi.PlanAnswer{Token: 40, Window: "day"})
	storage := filepath.Join(dir, "state")
	e := startRunIn(t, http.DefaultClient, "http", flags{config: cfgFile, storage: &storage, clock: up.Clock})
	// The expansion through discovery runs beside the start.
	testtool.Until(t, 30*time.Second, "the 71 tuples that press on each allowance", func() bool {
		return grepLines(e.metrics(), `onchain_exporter_tuples{api="data"}`) == "onchain_exporter_tuples{api=\"data\"} 71\n"
	})
	e.app.Settle()
	run(e, 3*time.Hour)
	if got, want := budgetShown(e), `onchain_exporter_daily_budget_calls{api="data"} 35`; got != want {
		t.Errorf("a day's allowance of 40: %q, want %q", got, want)
	}
	if n := calls.inDay(start); n > 36 {
		t.Errorf("a day's allowance of 40: %d calls on the day by 03:30 UTC, more than its share (36)", n)
	}

	// A reload, the same plan: the day's count and its pace go on.
	if code, answer := e.get(http.MethodPost, "/-/reload"); code != http.StatusOK {
		t.Fatalf("reload: %d %s", code, answer)
	}
	run(e, 2*time.Hour)
	if n := calls.inDay(start); n > 36 {
		t.Errorf("a day's allowance of 40, after a reload: %d calls on the day by 05:30 UTC, more than its share (36)", n)
	}

	// The plan changes to an hour's allowance of 20: a budget of 345 a
	// day, at most 18 calls in any hour from the reload that reads it.
	up.Fake.SetPlanAnswer(fakeapi.PlanAnswer{Token: 20, Window: "hour"})
	changed := up.Clock.Now()
	if code, answer := e.get(http.MethodPost, "/-/reload"); code != http.StatusOK {
		t.Fatalf("reload: %d %s", code, answer)
	}
	run(e, 3*time.Hour)
	if got, want := budgetShown(e), `onchain_exporter_daily_budget_calls{api="data"} 345`; got != want {
		t.Errorf("an hour's allowance of 20: %q, want %q", got, want)
	}
	if n, at := calls.most(changed, time.Hour); n > 18 {
		t.Errorf("an hour's allowance of 20: %d calls in the hour from %s, more than its share (18)", n, at.Format(time.TimeOnly))
	}
	if n := calls.inDay(start) - calls.inDay(changed.Add(-time.Nanosecond)); n < 0 {
		t.Errorf("calls went back: %d", n)
	}
	e.stop()

	// A restart on a minute's allowance of 10: a rate_limit of 9 a
	// minute, at most 9 calls in any minute, the start's burst included.
	up.Fake.SetPlanAnswer(fakeapi.PlanAnswer{Token: 10, Window: "minute"})
	restarted := up.Clock.Now()
	e = startRunIn(t, http.DefaultClient, "http", flags{config: cfgFile, storage: &storage, clock: up.Clock})
	e.app.Settle()
	run(e, 20*time.Minute)
	if n, at := calls.most(restarted, time.Minute); n > 9 {
		t.Errorf("a minute's allowance of 10: %d calls in the minute from %s, more than its share (9)", n, at.Format(time.TimeOnly))
	}
	if got, want := budgetShown(e), `onchain_exporter_daily_budget_calls{api="data"} 12960`; got != want {
		t.Errorf("a minute's allowance of 10: %q, want %q", got, want)
	}
	if n, _ := calls.most(restarted, 20*time.Minute); n < 20 {
		t.Errorf("a minute's allowance of 10: %d calls in 20 minutes: the exporter should keep calling at its pace", n)
	}
}
