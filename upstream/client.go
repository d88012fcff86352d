package upstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/onchain-exporter/onchain_exporter/budget"
	"github.com/onchain-exporter/onchain_exporter/decode"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/common/version"

	"github.com/onchain-exporter/onchain_exporter/config"
)

// MaxBody caps what is read of one answer: real answers are a few KiB.
const MaxBody = 8 << 20

// Client is the one way to call an API: keep-alives, at most
// `concurrency` requests in flight, rate_limit and daily_budget, one retry
// of server faults, and API-wide pauses after errors that say "stop
// calling".
type Client struct {
	api      *config.API
	dialect  dialect
	client   *http.Client
	sem      chan struct{}
	m        *Metrics
	now      func() time.Time
	logger   log.Logger
	identity string // Identity of the section it was built from
	shapes   *decode.ShapeLog
	scrub    scrubber
	// refusals is the Pool's (Pool.Refusals); nil outside a Pool.
	refusals chan<- string
	plan     *planHolder // the account's

	mu sync.Mutex
	// closed: an answer in flight after the client was replaced pauses
	// nothing.
	closed bool
	// limit (nil without rate_limit) and budget are the account's: a
	// client rebuilt for it takes them over (Pool.build).
	limit  *minuteCap
	budget *budget.Budget
	// noRaw: the key was refused raw access (RAW_ACCESS_REQUIRED), so
	// source_text is left out of its calls.
	noRaw bool
	// answered: a keyed request had an answer with data.
	answered bool
	// pauses holds one API-wide pause per lane, key-free [0] and keyed
	// [1]: upstream limits and rejects the two apart (a key's quota or a
	// bad key stop keyed calls; key-free calls count per IP).
	pauses [2]Pause
}

func lane(keyed bool) int {
	if keyed {
		return 1
	}
	return 0
}

// New builds the client of an API section; m counts its calls.
func New(a *config.API, m *Metrics, now func() time.Time, logger log.Logger) *Client {
	m.initErrors(a.Name)
	base := newTransport(a)
	u := &Client{
		api:     a,
		dialect: dialectFor(a.Name),
		sem:     make(chan struct{}, a.Concurrency),
		m:       m,
		now:     now,
		logger:  log.With(logger, "api", a.Name),
		shapes:  decode.NewShapeLog(logger),
		scrub:   newScrubber(a),
		plan:    &planHolder{},
	}
	if a.RateLimit > 0 {
		u.limit = newMinuteCap(a.RateLimit, now)
	}
	u.budget = budget.New(a.DailyBudget, now()) // every API counts its calls of the day
	u.client = &http.Client{
		// Every attempt on the wire waits for its turn under rate_limit,
		// then takes a call of the budget, then is counted: a request
		// rate_limit holds back spends none of the budget.
		Transport: &retryTransport{
			next: &limitTransport{
				next: &budgetTransport{
					next:   &instrumentTransport{next: base, api: a.Name, m: m, now: now, logger: u.logger, scrub: u.scrub},
					budget: u.Budget,
					now:    now,
				},
				cap: u.rateCap,
			},
			now:   now,
			sleep: sleepCtx,
		},
		CheckRedirect: checkRedirect(a.HTTPClient.FollowRedirects),
	}
	return u
}

// checkRedirect refuses redirects unless follow_redirects is set, and
// then follows at most 3 within the API's scheme and host: the credential
// never goes to another host.
func checkRedirect(follow bool) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		switch {
		case !follow:
			return fmt.Errorf("redirect (HTTP %d) not followed: follow_redirects is off", req.Response.StatusCode)
		case len(via) > 3:
			return errors.New("stopped after 3 redirects")
		case req.URL.Host != via[0].URL.Host || req.URL.Scheme != via[0].URL.Scheme:
			return fmt.Errorf("refused redirect to another host (%s)", req.URL.Host)
		}
		return nil
	}
}

// rateCap is the client's rate_limit, read under its lock (Pool.build
// sets it after New).
func (u *Client) rateCap() *minuteCap {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.limit
}

// Close drops idle connections; requests in flight end with their
// context. Its pauses end with it, and so does their gauge.
func (u *Client) Close() {
	u.client.CloseIdleConnections()
	u.mu.Lock()
	u.closed = true
	u.mu.Unlock()
	u.lift(func(Pause) bool { return true })
}

// Get performs one GET of the API's path with query and returns the body
// of a successful answer, or an *Error, which never carries the
// credential (clean).
//
// A key without raw access (RAW_ACCESS_REQUIRED) is asked again at once
// without source_text, and from then on until a reload.
func (u *Client) Get(ctx context.Context, path string, query url.Values, keyed bool) ([]byte, error) {
	body, _, err := u.fetch(ctx, path, query, keyed, 0)
	return body, err
}

// Fetch is Get that hands over the answer parsed (decode.Parse, arrays
// cut to maxItems).
func (u *Client) Fetch(ctx context.Context, path string, query url.Values, keyed bool, maxItems int) (any, error) {
	_, root, err := u.fetch(ctx, path, query, keyed, maxItems)
	return root, err
}

func (u *Client) fetch(ctx context.Context, path string, query url.Values, keyed bool, maxItems int) ([]byte, any, error) {
	if !query.Has(sourceText) {
		return u.get(ctx, path, query, keyed, maxItems)
	}
	u.mu.Lock()
	noRaw := u.noRaw
	u.mu.Unlock()
	if !noRaw {
		body, root, err := u.get(ctx, path, query, keyed, maxItems)
		if e := AsErrorOrNil(err); e == nil || e.Code != "RAW_ACCESS_REQUIRED" {
			return body, root, err
		}
		u.mu.Lock()
		first := !u.noRaw
		u.noRaw = true
		u.mu.Unlock()
		if first {
			level.Warn(u.logger).Log("msg", "key has no raw access; asking for the excerpt instead of source_text", "endpoint", path)
		}
	}
	q := maps.Clone(query)
	delete(q, sourceText)
	return u.get(ctx, path, q, keyed, maxItems)
}

// sourceText is the Analyst Consensus parameter that asks for raw text.
const sourceText = "source_text"

// AsErrorOrNil is AsError for a non-nil error, nil otherwise.
func AsErrorOrNil(err error) *Error {
	if err == nil {
		return nil
	}
	return AsError(err)
}

func (u *Client) get(ctx context.Context, path string, query url.Values, keyed bool, maxItems int) ([]byte, any, error) {
	keyed = keyed || u.api.Name == config.APIData // the data API has no key-free call
	fail := func(e *Error) *Error { return u.failOn(keyed, e) }
	if until, by, ok := u.paused(keyed); ok {
		return nil, nil, &Error{Code: "paused", PauseUntil: until, Message: fmt.Sprintf("calls paused until %s after %s", until.UTC().Format(time.RFC3339), by)}
	}
	if r, _ := u.planCheck(path, query); r != nil { // not sent: the plan refuses it
		return nil, nil, fail(&Error{Code: PlanRefused, Refused: true, Hold: PlanHold, Message: "not asked: " + r.Error()})
	}
	resp, e := u.send(ctx, path, query, keyed)
	if e != nil {
		return nil, nil, fail(e)
	}
	body := resp.body
	fail = func(e *Error) *Error {
		e.URL = resp.shown
		if e.Refused { // only a refusal asks the plan
			// A refusal the plan in force does not explain (a passing
			// fault, a plan changing now) is retried, not held a day.
			if r, known := u.planCheck(path, query); known && r == nil {
				e.Hold = 0
				e.Details = strings.TrimSpace(e.Details + " (the key's plan lists it: asked again soon)")
			}
		}
		return u.failOn(keyed, e)
	}
	if resp.status < 200 || resp.status > 299 {
		if e := u.dialect.check(resp.status, resp.header, body, u.now()); e != nil {
			return nil, nil, fail(e)
		}
	}
	root, err := decode.Parse(body, maxItems)
	if err != nil {
		return nil, nil, fail(&Error{Code: "decode", HTTP: resp.status, Message: err.Error()})
	}
	if e := u.dialect.answer(root, resp.status, resp.header, u.now()); e != nil {
		return nil, nil, fail(e)
	}
	if keyed {
		u.mu.Lock()
		u.answered = true // the key reads something (RejectIfRefusedEverywhere)
		u.mu.Unlock()
	}
	return body, root, nil
}

// sent is the answer to one request, its body read whole, and the URL
// asked for as a message may show it (ShownURL).
type sent struct {
	status int
	header http.Header
	body   []byte
	shown  string
}

// send makes one GET of path through the client, the key as the dialect
// sends it when keyed, and reads the answer up to MaxBody. Its errors are
// not counted (the caller does, failOn).
func (u *Client) send(ctx context.Context, path string, query url.Values, keyed bool) (sent, *Error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.api.URL.String()+path, nil)
	if err != nil {
		return sent{}, &Error{Code: "request", Message: err.Error()}
	}
	q := url.Values{}
	maps.Copy(q, query)
	if keyed {
		u.dialect.authorize(req, q, u.api)
	}
	req.URL.RawQuery = q.Encode()
	out := sent{shown: ShownURL(req.URL)}
	fail := func(e *Error) (sent, *Error) {
		e.URL = out.shown
		return out, e
	}
	select {
	case u.sem <- struct{}{}:
		defer func() { <-u.sem }()
	case <-ctx.Done():
		return fail(&Error{Code: "timeout", Message: "no free connection slot before the deadline"})
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", version.ComponentUserAgent(config.Namespace))
	resp, err := u.client.Do(req)
	if err != nil {
		return fail(transportError(err))
	}
	defer resp.Body.Close()
	out.status, out.header = resp.StatusCode, resp.Header
	u.observeDaily(resp.Header)
	out.body, err = io.ReadAll(io.LimitReader(resp.Body, MaxBody+1))
	if err != nil {
		return fail(transportError(err))
	}
	if len(out.body) > MaxBody {
		return fail(&Error{Code: "decode", HTTP: resp.StatusCode, TooLarge: true, Message: fmt.Sprintf("answer larger than %d MiB, not read", MaxBody>>20)})
	}
	return out, nil
}

// Fail counts an error found after the call (decode, no data).
func (u *Client) Fail(e *Error) *Error { return u.failOn(true, e) }

// failOn cleans and counts an error and applies its pause to the lane of
// the call; a call held back by the exporter's own limits is counted
// apart, not as an error.
func (u *Client) failOn(keyed bool, e *Error) *Error {
	u.clean(e)
	if e.Refused && e.URL != "" {
		u.noteRefusal() // sent and refused: the plan may have changed
	}
	switch {
	case e.HeldBack: // not sent: nothing failed, nothing pauses
		u.m.held.WithLabelValues(u.api.Name, e.HeldBy()).Inc()
		return e
	case !e.Refused:
		u.m.apiErrors.WithLabelValues(u.api.Name, e.Code).Inc()
	case e.Word != "":
		u.m.apiErrors.WithLabelValues(u.api.Name, labelCode(e.Word)).Inc()
	}
	until := e.PauseUntil
	if until.IsZero() && e.Pause > 0 {
		until = u.now().Add(e.Pause)
	}
	if !until.IsZero() && u.pause(keyed, until, e.Code, e.Credential) {
		u.logCredentialPause(keyed, until, e.Code, false)
	}
	return e
}

// transportError classifies a failure below HTTP, dropping the URL (which
// may carry api_key).
func transportError(err error) *Error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var own *Error
	if errors.As(err, &own) {
		return own // rate_limit held the request back (limitTransport)
	}
	if msg, ok := certificateError(err); ok {
		return &Error{Code: "transport", Message: msg}
	}
	code := "transport"
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || errors.As(err, &ne) && ne.Timeout() {
		code = "timeout"
	}
	return &Error{Code: code, Message: strings.TrimSpace(err.Error()), Retryable: true}
}

// DefaultRows is where the API's answers hold their rows, as a dotted path.
func (u *Client) DefaultRows() string { return u.dialect.defaultRows() }

// API is the configuration section the client was built from.
func (u *Client) API() *config.API { return u.api }

// CountErrors counts n errors of one code found in an answer otherwise
// served (bad values beside good ones).
func (u *Client) CountErrors(code string, n int) {
	u.m.apiErrors.WithLabelValues(u.api.Name, labelCode(code)).Add(float64(n))
}

// WrapTransport wraps the transport under the client's own layers, so
// that a test can watch or disturb what goes on the wire.
func (u *Client) WrapTransport(wrap func(http.RoundTripper) http.RoundTripper) {
	it := u.client.Transport.(*retryTransport).next.(*limitTransport).next.(*budgetTransport).next.(*instrumentTransport)
	it.next = wrap(it.next)
}

// Shapes is where the shapes of this API's answers are logged.
func (u *Client) Shapes() *decode.ShapeLog { return u.shapes }
