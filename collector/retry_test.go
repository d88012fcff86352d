package collector

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
)

// recorder is an http.RoundTripper stub: it answers from a list and
// records every request and every wait of the retry transport.
type recorder struct {
	mu      sync.Mutex
	answers []func() (*http.Response, error)
	calls   int
	sleeps  []time.Duration
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a := r.answers[min(r.calls, len(r.answers)-1)]
	r.calls++
	return a()
}

func (r *recorder) sleep(ctx context.Context, d time.Duration) error {
	r.mu.Lock()
	r.sleeps = append(r.sleeps, d)
	r.mu.Unlock()
	return ctx.Err()
}

func answer(code int, header ...string) func() (*http.Response, error) {
	return func() (*http.Response, error) {
		h := http.Header{}
		for i := 0; i+1 < len(header); i += 2 {
			h.Set(header[i], header[i+1])
		}
		return &http.Response{StatusCode: code, Header: h, Body: io.NopCloser(strings.NewReader(`{"status":{"code":` + strconv.Itoa(code) + `}}`))}, nil
	}
}

var testNow = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

func roundTrip(t *testing.T, rec *recorder, timeout time.Duration) (*http.Response, error) {
	t.Helper()
	rt := &retryTransport{next: rec, now: func() time.Time { return testNow }, sleep: rec.sleep}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://upstream.invalid/v1/x", nil)
	resp, err := rt.RoundTrip(req)
	if resp != nil {
		b, rerr := io.ReadAll(resp.Body)
		resp.Body.Close()
		if rerr != nil || len(b) == 0 {
			t.Errorf("the answer handed back has no readable body (%v)", rerr)
		}
	}
	return resp, err
}

// TestRetryHonoursRetryAfterAsAFloor: a retryable answer is tried once
// more, after at least what Retry-After asks (seconds or an HTTP date)
// and at least the transport's own floor.
func TestRetryHonoursRetryAfterAsAFloor(t *testing.T) {
	for _, tc := range []struct {
		name   string
		first  func() (*http.Response, error)
		wantGE time.Duration
	}{
		{"503 without Retry-After", answer(503), 2 * time.Second},
		{"503 Retry-After 7", answer(503, "Retry-After", "7"), 7 * time.Second},
		{"503 Retry-After 1 (below the floor)", answer(503, "Retry-After", "1"), 2 * time.Second},
		{"500 Retry-After 4", answer(500, "Retry-After", "4"), 4 * time.Second},
		{"502", answer(502), time.Second},
		{"504 Retry-After as a date", answer(504, "Retry-After", testNow.Add(12*time.Second).Format(http.TimeFormat)), 12 * time.Second},
		{"transport error", func() (*http.Response, error) { return nil, errors.New("connection reset by peer") }, 500 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{answers: []func() (*http.Response, error){tc.first, answer(200)}}
			resp, err := roundTrip(t, rec, time.Minute)
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("retry did not reach the healthy answer: %v %v", resp, err)
			}
			if rec.calls != 2 || len(rec.sleeps) != 1 {
				t.Fatalf("%d calls, waits %v; want 2 calls and one wait", rec.calls, rec.sleeps)
			}
			if rec.sleeps[0] < tc.wantGE {
				t.Errorf("waited %v before the retry, want at least %v", rec.sleeps[0], tc.wantGE)
			}
		})
	}
}

// TestRetryNeverRunsPastTheDeadline: when the wait Retry-After asks does
// not fit in what is left of the request's deadline, the first answer is
// handed back at once, intact.
func TestRetryNeverRunsPastTheDeadline(t *testing.T) {
	for _, tc := range []struct {
		name    string
		first   func() (*http.Response, error)
		timeout time.Duration
	}{
		{"503 Retry-After 30 with 5 s left", answer(503, "Retry-After", "30"), 5 * time.Second},
		{"500 with 1 s left", answer(500), time.Second},
		{"503 with 1.5 s left", answer(503), 1500 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{answers: []func() (*http.Response, error){tc.first, answer(200)}}
			resp, err := roundTrip(t, rec, tc.timeout)
			if err != nil {
				t.Fatal(err)
			}
			if rec.calls != 1 || len(rec.sleeps) != 0 || resp.StatusCode == 200 {
				t.Errorf("%d calls, waits %v, status %d: want the first answer without a retry", rec.calls, rec.sleeps, resp.StatusCode)
			}
		})
	}
}

// TestNoRetryOfWhatRetryingCannotFix: 400, 401, 403, 404, 405 and 429 (the
// API-wide pause handles that one) reach the caller after one request.
func TestNoRetryOfWhatRetryingCannotFix(t *testing.T) {
	for _, code := range []int{200, 400, 401, 403, 404, 405, 429} {
		rec := &recorder{answers: []func() (*http.Response, error){answer(code, "Retry-After", "1"), answer(200)}}
		resp, err := roundTrip(t, rec, time.Minute)
		if err != nil || resp.StatusCode != code {
			t.Fatalf("HTTP %d: got %v %v", code, resp, err)
		}
		if rec.calls != 1 || len(rec.sleeps) != 0 {
			t.Errorf("HTTP %d: %d calls and waits %v, want one call", code, rec.calls, rec.sleeps)
		}
	}
	rec := &recorder{answers: []func() (*http.Response, error){func() (*http.Response, error) { return nil, context.Canceled }}}
	if _, err := roundTrip(t, rec, time.Minute); err == nil || rec.calls != 1 {
		t.Errorf("a cancelled request was retried (%d calls, %v)", rec.calls, err)
	}
}

// TestRetryDeadlineUsesTheRealClock: the retry decision compares the wait
// with the request's deadline, which is real time, whatever clock the
// exporter was given for data time.
func TestRetryDeadlineUsesTheRealClock(t *testing.T) {
	for _, offset := range []time.Duration{-72 * time.Hour, 72 * time.Hour} {
		rec := &recorder{answers: []func() (*http.Response, error){answer(500), answer(200)}}
		rt := &retryTransport{next: rec, now: func() time.Time { return time.Now().Add(offset) }, sleep: rec.sleep}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://upstream.invalid/", nil)
		resp, err := rt.RoundTrip(req)
		cancel()
		if err != nil || resp.StatusCode != 200 || rec.calls != 2 {
			t.Errorf("clock off by %v: a 500 with 30 s left was not retried (%d calls, %v)", offset, rec.calls, err)
		}
		rec = &recorder{answers: []func() (*http.Response, error){answer(503, "Retry-After", "60"), answer(200)}}
		rt.next, rt.sleep = rec, rec.sleep
		ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
		req, _ = http.NewRequestWithContext(ctx, http.MethodGet, "http://upstream.invalid/", nil)
		resp, err = rt.RoundTrip(req)
		cancel()
		if err != nil || resp.StatusCode != 503 || rec.calls != 1 {
			t.Errorf("clock off by %v: a retry 60 s out was attempted with 30 s left (%d calls, %v)", offset, rec.calls, err)
		}
	}
}

// TestNotRetryableAnswersAreSentOnce runs 400, 401 and 404 through the
// exporter: one request each, and no further call while the tuple is held
// or the API paused.
func TestNotRetryableAnswersAreSentOnce(t *testing.T) {
	for _, tc := range []struct {
		name, yml, code string
	}{
		{"401", faultConfig, "401"},
		{"404", `
data:
  url: "{{URL}}"
  token_env: T
  metrics:
    - path: /v1/nosuchcoin/network-data/supply
`, "404"},
		{"400", `
data:
  url: "{{URL}}"
  token_env: T
  metrics:
    - path: /v1/btc/market-data/open-interest
      exchange: no_such_exchange
`, "400"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.yml, fakeapi.Options{})
			if tc.code == "401" {
				e.fake.SetFault("data", fakeapi.Fault{Kind: fakeapi.Unauthorized})
			}
			body := e.scrape("5")
			if got := counter(body, `onchain_exporter_upstream_requests_total{api="data",code="`+tc.code+`"}`); got != 1 {
				t.Fatalf("upstream_requests_total{code=%q} = %v, want 1:\n%s", tc.code, got, strings.Join(lines(body, "onchain_exporter_upstream_requests_total"), "\n"))
			}
			for range 5 {
				e.clock.Add(2 * time.Minute)
				e.scrape("5")
			}
			if got := e.fake.Calls("data"); got != 1 {
				t.Errorf("%d calls in 10 minutes after HTTP %s, want the one", got, tc.code)
			}
		})
	}
}

// TestRetryAfterIsAFloorForTheNextCall: after a 429 with Retry-After, the
// API is not called again before that time has passed.
func TestRetryAfterIsAFloorForTheNextCall(t *testing.T) {
	for _, api := range config.APINames {
		t.Run(api, func(t *testing.T) {
			e := newEnv(t, faultConfig, fakeapi.Options{})
			e.scrape("5")
			e.fake.SetFault(api, fakeapi.Fault{Kind: fakeapi.TooManyRequests, RetryAfter: 300})
			e.clock.Add(2 * time.Minute)
			e.scrape("5")
			calls := e.fake.Calls(api)
			e.fake.ClearFaults()
			for range 4 {
				e.clock.Add(time.Minute)
				e.scrape("5")
			}
			if got := e.fake.Calls(api); got != calls {
				t.Errorf("%d calls within Retry-After: 300", got-calls)
			}
			body := e.scrape("5")
			if got := valueOf(body, `onchain_exporter_api_paused{api="`+api+`"`); got != "1" {
				t.Errorf("api_paused = %q while Retry-After runs", got)
			}
			e.clock.Add(2 * time.Minute)
			body = e.scrape("5")
			if got := e.fake.Calls(api); got != calls+1 {
				t.Errorf("%d calls after Retry-After passed, want 1", got-calls)
			}
			if got := valueOf(body, `onchain_exporter_query_success{api="`+api+`"`); got != "1" {
				t.Errorf("query_success = %q after Retry-After passed", got)
			}
		})
	}
}

// TestRetryWaitsOutsideTheScrape: a 503 asking for Retry-After: 4 is
// retried no sooner than that, by the refresh and not by the scrape, which
// answers within its own deadline meanwhile.
func TestRetryWaitsOutsideTheScrape(t *testing.T) {
	e := newEnv(t, `
data:
  url: "{{URL}}"
  token_env: T
  timeout: 20s
  metrics:
    - path: /v1/btc/network-data/supply
      window: day
`, fakeapi.Options{})
	var mu sync.Mutex
	var arrivals []time.Time
	setBase(t, e.exp, config.APIData, func(next http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			defer mu.Unlock()
			arrivals = append(arrivals, time.Now())
			if len(arrivals) == 1 {
				return &http.Response{StatusCode: 503, Header: http.Header{"Retry-After": {"4"}}, Request: r,
					Body: io.NopCloser(strings.NewReader(`{"status":{"code":503,"message":"service_unavailable"},"result":{}}`))}, nil
			}
			return next.RoundTrip(r)
		})
	})
	start := time.Now()
	e.scrape("1") // a 0.5 s deadline
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("the scrape waited %v for the retry", took)
	}
	waitIdle(t, e.exp)
	body := e.scrape("1")
	mu.Lock()
	defer mu.Unlock()
	if len(arrivals) != 2 {
		t.Fatalf("%d requests, want the 503 and one retry", len(arrivals))
	}
	if gap := arrivals[1].Sub(arrivals[0]); gap < 4*time.Second-50*time.Millisecond {
		t.Errorf("retried %v after a Retry-After: 4", gap)
	}
	if len(lines(body, "onchain_supply{")) != 1 || valueOf(body, `onchain_exporter_query_success{api="data"`) != "1" {
		t.Errorf("the retried refresh did not land:\n%s", strings.Join(lines(body, "onchain_"), "\n"))
	}
}
