package collector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/go-kit/log"
	"golang.org/x/time/rate"

	"github.com/onchain-exporter/onchain_exporter/config"
)

// maxBody caps what is read of one answer: real answers with a small limit
// are a few KiB; anything past this is a fault, not data.
const maxBody = 8 << 20

// upstream is the one way to call an API: one reused client with
// keep-alives, at most `concurrency` requests in flight, an optional
// requests-per-minute limit, one retry for server faults (transport.go),
// and an API-wide pause after errors that say "stop calling".
type upstream struct {
	api     *config.API
	dialect dialect
	client  *http.Client
	sem     chan struct{}
	limiter *rate.Limiter
	m       *selfMetrics
	now     func() time.Time
	logger  log.Logger

	mu          sync.Mutex
	pausedUntil time.Time
	pausedBy    string
}

func newUpstream(a *config.API, m *selfMetrics, now func() time.Time, logger log.Logger) *upstream {
	base := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          a.Concurrency * 2,
		MaxIdleConnsPerHost:   a.Concurrency,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: a.Timeout,
		ForceAttemptHTTP2:     true,
	}
	u := &upstream{
		api:     a,
		dialect: dialectFor(a.Name),
		sem:     make(chan struct{}, a.Concurrency),
		m:       m,
		now:     now,
		logger:  log.With(logger, "api", a.Name),
	}
	u.client = &http.Client{
		Transport: &retryTransport{
			next:  &instrumentTransport{next: base, api: a.Name, m: m, now: now},
			now:   now,
			sleep: sleepCtx,
		},
		// Credentials must not follow a redirect to another host; a
		// redirect within the API's host is followed.
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 3 {
				return errors.New("stopped after 3 redirects")
			}
			if req.URL.Host != via[0].URL.Host || req.URL.Scheme != via[0].URL.Scheme {
				return fmt.Errorf("refused redirect to another host (%s)", req.URL.Host)
			}
			return nil
		},
	}
	if a.RateLimit > 0 {
		perSecond := rate.Limit(a.RateLimit / 60)
		u.limiter = rate.NewLimiter(perSecond, max(1, int(a.RateLimit/60)))
	}
	return u
}

// close drops idle connections; requests in flight end with their context.
func (u *upstream) close() { u.client.CloseIdleConnections() }

// paused reports an API-wide pause in force.
func (u *upstream) paused() (time.Time, string, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.pausedUntil.IsZero() {
		return time.Time{}, "", false
	}
	if !u.now().Before(u.pausedUntil) {
		u.m.apiPaused.DeleteLabelValues(u.api.Name, u.pausedBy)
		u.pausedUntil, u.pausedBy = time.Time{}, ""
		return time.Time{}, "", false
	}
	return u.pausedUntil, u.pausedBy, true
}

func (u *upstream) pause(until time.Time, code string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if until.After(u.pausedUntil) {
		if u.pausedBy != "" {
			u.m.apiPaused.DeleteLabelValues(u.api.Name, u.pausedBy)
		}
		u.pausedUntil, u.pausedBy = until, code
		u.m.apiPaused.WithLabelValues(u.api.Name, code).Set(1)
	}
}

// get performs one GET of the API's path with query and returns the body
// of a successful answer, or an *apiError. Nothing in an error carries the
// credential: URLs in errors are rebuilt without it.
func (u *upstream) get(ctx context.Context, path string, query url.Values, keyed bool) ([]byte, error) {
	if until, by, ok := u.paused(); ok {
		return nil, &apiError{Code: "paused", PauseUntil: until, Message: fmt.Sprintf("calls paused until %s after %s", until.UTC().Format(time.RFC3339), by)}
	}
	select {
	case u.sem <- struct{}{}:
		defer func() { <-u.sem }()
	case <-ctx.Done():
		return nil, u.fail(&apiError{Code: "timeout", Message: "no free connection slot before the deadline"})
	}
	if u.limiter != nil {
		if err := u.limiter.Wait(ctx); err != nil {
			return nil, u.fail(&apiError{Code: "rate_limited", Message: "own rate limit (rate_limit) would pass the deadline"})
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.api.URL.String()+path, nil)
	if err != nil {
		return nil, u.fail(&apiError{Code: "request", Message: err.Error()})
	}
	q := url.Values{}
	for k, v := range query {
		q[k] = v
	}
	if keyed || u.api.Name == config.APIData {
		u.dialect.authorize(req, q, u.api)
	}
	req.URL.RawQuery = q.Encode()
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "onchain_exporter")
	resp, err := u.client.Do(req)
	if err != nil {
		return nil, u.fail(transportError(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, u.fail(transportError(err))
	}
	if len(body) > maxBody {
		return nil, u.fail(&apiError{Code: "decode", HTTP: resp.StatusCode, Message: fmt.Sprintf("answer larger than %d MiB, not read", maxBody>>20)})
	}
	if e := u.dialect.check(resp.StatusCode, resp.Header, body, u.now()); e != nil {
		return nil, u.fail(e)
	}
	return body, nil
}

// fail counts an error and applies its API-wide pause.
func (u *upstream) fail(e *apiError) *apiError {
	u.m.apiErrors.WithLabelValues(u.api.Name, e.Code).Inc()
	switch {
	case !e.PauseUntil.IsZero():
		u.pause(e.PauseUntil, e.Code)
	case e.Pause > 0:
		u.pause(u.now().Add(e.Pause), e.Code)
	}
	return e
}

// transportError classifies a failure below HTTP, dropping the URL (which
// may carry api_key) from the message.
func transportError(err error) *apiError {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	code := "transport"
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || isTimeout(err) {
		code = "timeout"
	}
	return &apiError{Code: code, Message: strings.TrimSpace(err.Error()), Retryable: true}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
