package backfill

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// TestResume: a run interrupted at its fourth call records the series it
// wrote (at least one: at most three calls run at once, each series one
// call; none answered after the interrupt); run again with the same flags
// it calls only for the others, and the file holds what that of a run
// never interrupted holds. A third run calls nothing; one with another
// --from is refused with what to do.
func TestResume(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	// Every call from the fourth on interrupts the run before it is
	// answered: a call that went out as the run was interrupted is too.
	e := newEnv(t, mixedConfig, counted(new(atomic.Int64), func(n int64, _ *http.Request) {
		if n >= 4 {
			cancel()
		}
	}))
	o := e.options(3)
	sum, err := Run(ctx, e.cfg, e.pool, o)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: %v", err)
	}
	written := sum.Written
	if written < 1 || written > 3 || sum.Complete || sum.NotTried != 6-written {
		t.Fatalf("interrupted run: %+v", sum)
	}
	if _, err := os.Stat(o.Output); !os.IsNotExist(err) {
		t.Errorf("an incomplete output was written: %v", err)
	}

	// The runs that follow call a second fake of the same data: a call
	// the interrupted run cut may still reach the first after Run
	// returned (the request was on the wire; only the client gave up on
	// it), and would be counted as the resumed run's.
	var calls atomic.Int64
	again := newEnv(t, mixedConfig, counted(&calls, func(int64, *http.Request) {}))
	sum = again.run(o)
	if n := calls.Load(); n != int64(6-written) || sum.Already != written || sum.Written != 6-written || !sum.Complete {
		t.Errorf("resumed run: %d calls, %+v; want a call for each of the %d series not written", n, sum, 6-written)
	}

	fresh := newEnv(t, mixedConfig, nil)
	fo := fresh.options(3)
	fresh.run(fo)
	got, want := parseOM(t, o.Output), parseOM(t, fo.Output)
	if !slices.Equal(got.order, want.order) || len(got.series) != len(want.series) || len(want.series) < 20 {
		t.Errorf("the resumed file has families %v and %d series, an uninterrupted run's %v and %d", got.order, len(got.series), want.order, len(want.series))
	}
	for key, pts := range want.series {
		if !slices.Equal(got.series[key], pts) {
			t.Errorf("%s: resumed %v, uninterrupted %v", key, got.series[key], pts)
		}
	}

	before := calls.Load()
	sum = again.run(o)
	if n := calls.Load() - before; n != 0 || !sum.Complete || sum.Already != 6 {
		t.Errorf("third run: %d calls, %+v", n, sum)
	}
	o.From = o.From.AddDate(0, 0, -1)
	if _, err := Run(context.Background(), again.cfg, again.pool, o); err == nil || !strings.Contains(err.Error(), "--from") ||
		!strings.Contains(err.Error(), "remove it to start over") {
		t.Errorf("another --from: %v", err)
	}
}

// TestDryRunCallsNothing: the dry run prints every call a run would make,
// the pages of a long series included, and makes none.
func TestDryRunCallsNothing(t *testing.T) {
	e := newEnv(t, mixedConfig+`    - path: /analyst-views
      asset: btc
`, nil)
	long := newEnv(t, dataConfig(eventsEntry+`    - path: /v1/btc/market-data/open-interest
      exchange: all
`), nil)
	var out bytes.Buffer
	o := e.options(3)
	if err := DryRun(&out, e.cfg, o); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{
		"data GET /v1/btc/network-data/supply?from=20261117T000000&limit=100000&to=20261119T123456&window=day",
		"data GET /v1/btc/network-data/supply?from=20261117T000000&limit=100000&to=20261120T123456&window=block",
		"indicator GET /api/equities/KRX:005930/pbr-band?limit=1000&order=desc",
		"# 6 series, 6 calls",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the dry run does not print %q:\n%s", want, text)
		}
	}
	out.Reset()
	lo := long.options(100)
	if err := DryRun(&out, long.cfg, lo); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "data GET /v2/network/events-count"); n != 2 {
		t.Errorf("%d calls printed for 14 400 rows at 10 000 a call:\n%s", n, out.String())
	}
	if !strings.Contains(out.String(), "all is resolved by the API's listing call first") {
		t.Errorf("the listing for all is not said:\n%s", out.String())
	}
	if n := e.fake.Calls("data") + e.fake.Calls("indicator") + long.fake.Calls("data"); n != 0 {
		t.Errorf("the dry run made %d calls", n)
	}
	if _, err := os.Stat(o.ProgressFile); !os.IsNotExist(err) {
		t.Errorf("the dry run wrote a progress file: %v", err)
	}
}

// TestRefusedSeriesIsSkipped: a series the upstream refuses is skipped
// with its reason and counted, and the others are written.
func TestRefusedSeriesIsSkipped(t *testing.T) {
	e := newEnv(t, dataConfig(`    - path: /v1/btc/market-data/open-interest
      exchange: [binance, nosuch, bybit]
`), nil)
	o := e.options(3)
	sum := e.run(o)
	if sum.Refused != 1 || sum.Written != 2 || !sum.Complete {
		t.Fatalf("summary %+v", sum)
	}
	if e.logs.Count("upstream refuses this series", "exchange=nosuch", "bad_request") != 1 {
		t.Errorf("the refusal is not logged with its reason:\n%s", e.logs.String())
	}
	p := parseOM(t, o.Output)
	p.find(t, "onchain_open_interest_usd", map[string]string{"exchange": "binance"})
	p.find(t, "onchain_open_interest_usd", map[string]string{"exchange": "bybit"})
}

// TestTooLargeAnswerAsksForFewerRows: an answer past the client's size cap
// is asked again with half the limit, and the history is whole.
func TestTooLargeAnswerAsksForFewerRows(t *testing.T) {
	e := newEnv(t, dataConfig(eventsEntry), func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if n, _ := strconv.Atoi(r.URL.Query().Get("limit")); n > 5000 {
				w.Write(bytes.Repeat([]byte(" "), upstream.MaxBody+1))
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	o := e.options(100)
	sum := e.run(o)
	if want := expectedRows(e.cfg.Tuples[0], o.From, o.To.Add(-10*60e9)); sum.Rows != int64(want) || e.fake.Calls("data") != 3 {
		t.Errorf("%d rows in %d calls to the fake, want %d in 3 of 5 000", sum.Rows, e.fake.Calls("data"), want)
	}
	if e.logs.Count("answer too large", "limit=5000") != 1 {
		t.Errorf("logs:\n%s", e.logs.String())
	}
	parseOM(t, o.Output)
	if _, err := os.Stat(filepath.Join(e.dir, "out.om.parts")); !os.IsNotExist(err) {
		t.Errorf("parts left: %v", err)
	}
}

// TestPageThatDoesNotMoveBackStops: an upstream that takes to= as if it
// were later by all but one row of a page answers pages that move back
// one row each (the run would page a row per call, 4 400 calls here). The
// run stops at the first such page with an error that says so, and the
// series is not recorded as written.
func TestPageThatDoesNotMoveBackStops(t *testing.T) {
	var calls atomic.Int64
	// The first page is answered as asked, the next five a row back
	// each, then as asked again.
	e := newEnv(t, dataConfig(eventsEntry), counted(&calls, func(n int64, r *http.Request) {
		if n > 1 && n <= 6 {
			q := r.URL.Query()
			to, err := time.Parse(boundLayout, q.Get("to"))
			limit, _ := strconv.Atoi(q.Get("limit"))
			if err != nil || limit < 2 {
				t.Errorf("page query %v", q)
			}
			q.Set("to", to.Add(time.Duration(limit-1)*10*time.Minute).Format(boundLayout))
			r.URL.RawQuery = q.Encode()
		}
	}))
	o := e.options(100)
	sum := e.run(o)
	if calls.Load() != 2 || sum.Failed != 1 || sum.Written != 0 || sum.Complete {
		t.Errorf("%d calls, %+v; want the run to stop at the second page", calls.Load(), sum)
	}
	if e.logs.Count("series not written", "a page must move back by at least its own length", "to= not taken as asked") != 1 {
		t.Errorf("the error does not say why:\n%s", e.logs.String())
	}
}

// TestSaveTooSoonIsDeferred: a series written less than saveEvery after
// the last save is recorded once saveEvery has passed, while the next
// series is still on its way, not only when another series is written:
// a run killed then does not fetch it again.
func TestSaveTooSoonIsDeferred(t *testing.T) {
	release := make(chan struct{})
	var calls atomic.Int64
	e := newEnv(t, dataConfig(`    - path: /v1/btc/market-data/open-interest
      exchange: [binance, bybit, okx]
`), counted(&calls, func(n int64, _ *http.Request) {
		if n == 3 {
			<-release
		}
	}))
	o := e.options(3)
	o.Concurrency = 1
	done := make(chan error, 1)
	go func() { _, err := Run(context.Background(), e.cfg, e.pool, o); done <- err }()

	recorded := func() int {
		b, err := os.ReadFile(o.ProgressFile)
		if err != nil {
			return 0
		}
		var f progressFile
		if json.Unmarshal(b, &f) != nil {
			return 0
		}
		return len(f.Series)
	}
	// The simulated clock stands still: only the deferred save can record
	// the second series while the third call hangs. The deadline only
	// bounds a failing test.
	deadline := time.Now().Add(30 * time.Second)
	for recorded() < 2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	got := recorded()
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got != 2 {
		t.Errorf("while the third series was on its way, the progress file recorded %d series, want 2", got)
	}
	if recorded() != 3 {
		t.Errorf("at the end the progress file records %d series", recorded())
	}
}
