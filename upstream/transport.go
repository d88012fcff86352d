package upstream

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
)

// retryTransport retries an idempotent request once after a transport
// error or a 500, 502, 503 or 504, waiting at least what Retry-After asks
// and never past the request's deadline.
type retryTransport struct {
	next  http.RoundTripper
	now   func() time.Time // the upstream's clock, for Retry-After dates
	sleep func(context.Context, time.Duration) error
}

func (rt *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := rt.next.RoundTrip(req)
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		return resp, err
	}
	wait, retry := retryDelay(resp, err, rt.now())
	if !retry || req.Context().Err() != nil {
		return resp, err
	}
	// The deadline is real time, whatever clock the upstream keeps.
	if dl, ok := req.Context().Deadline(); ok && time.Until(dl) < wait+100*time.Millisecond {
		return resp, err // no time left for a second try
	}
	// The first answer (its first 64 KiB: a fault's body is short)
	// stands if the retry is held back: the outcome is what the upstream
	// answered, not a hold.
	var kept []byte
	if resp != nil {
		kept, _ = io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
	}
	if err := rt.sleep(req.Context(), wait); err != nil {
		return nil, err
	}
	resp2, err2 := rt.next.RoundTrip(req)
	var own *Error
	if errors.As(err2, &own) && own.HeldBack {
		if resp != nil {
			resp.Body = io.NopCloser(bytes.NewReader(kept))
		}
		return resp, err
	}
	return resp2, err2
}

// CloseIdleConnections passes on to the transport below (Client.Close).
func (rt *retryTransport) CloseIdleConnections() { closeIdle(rt.next) }

// retryDelay says whether an answer is worth one more try, and after how
// long: at least Retry-After, 2 s for 503, 1 s for other server faults.
func retryDelay(resp *http.Response, err error, now time.Time) (time.Duration, bool) {
	if err != nil {
		// Not retried: a call cut short, a refused certificate or unusable
		// TLS files (the same come back), or one not sent (rate_limit,
		// daily_budget: asked again when a turn frees).
		_, refused := certificateError(err)
		var unusable *unusableTLSError
		var own *Error
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || refused ||
			errors.As(err, &unusable) || errors.As(err, &own) && own.HeldBack {
			return 0, false
		}
		return 500 * time.Millisecond, true
	}
	floor, ok := retryFloors[resp.StatusCode]
	if !ok {
		return 0, false
	}
	return max(floor, retryAfter(resp.Header, now)), true
}

// retryFloors are the least waits before the retry of a server fault.
var retryFloors = map[int]time.Duration{http.StatusServiceUnavailable: 2 * time.Second,
	http.StatusInternalServerError: time.Second, http.StatusBadGateway: time.Second, http.StatusGatewayTimeout: time.Second}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// instrumentTransport counts every attempt that reaches the network, by
// the endpoint its context carries (WithEndpoint), and reads the quota
// headers of every answer.
type instrumentTransport struct {
	next   http.RoundTripper
	api    string
	m      *Metrics
	now    func() time.Time
	logger log.Logger // the client's: a header out of range is said once
	scrub  scrubber
}

func (it *instrumentTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := it.next.RoundTrip(req)
	it.m.requestDuration.WithLabelValues(it.api).Observe(time.Since(start).Seconds())
	endpoint, _ := req.Context().Value(endpointKey{}).(string)
	if err != nil {
		it.m.requests.WithLabelValues(it.api, endpoint, "error").Inc()
		return resp, err
	}
	it.m.requests.WithLabelValues(it.api, endpoint, statusLabel(resp.StatusCode)).Inc()
	it.m.observeHeaders(it.api, resp.Header, it.now(), it.ignored)
	return resp, nil
}

// ignored says, once per API and header, that a header was out of range.
func (it *instrumentTransport) ignored(header, value string) {
	if it.m.first(it.api + " " + header) {
		level.Warn(it.logger).Log("msg", "upstream header ignored: its value is out of range; said once per header", "header", header,
			"value", Cut(it.scrub.text(value)))
	}
}

func (it *instrumentTransport) CloseIdleConnections() { closeIdle(it.next) }

// closeBody closes the body of a request a transport does not send.
func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// closeIdle drops the idle connections of a transport that keeps any.
func closeIdle(rt http.RoundTripper) {
	if c, ok := rt.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
