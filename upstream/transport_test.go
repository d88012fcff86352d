package upstream

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

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/config"
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

// closeWatch records that Client.Close reached the transport.
type closeWatch struct {
	http.RoundTripper
	closed bool
}

func (c *closeWatch) CloseIdleConnections() { c.closed = true }

func TestCloseDropsIdleConnections(t *testing.T) {
	a := &config.API{Name: config.APIData, Timeout: time.Second, Concurrency: 1}
	u := New(a, NewMetrics(prometheus.NewRegistry()), time.Now, log.NewNopLogger())
	w := &closeWatch{}
	u.WrapTransport(func(rt http.RoundTripper) http.RoundTripper { w.RoundTripper = rt; return w })
	u.Close()
	if !w.closed {
		t.Error("Close did not reach the transport: a replaced client keeps its connections")
	}
}
