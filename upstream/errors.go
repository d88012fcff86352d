package upstream

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Error is an upstream call that did not yield data, classified once so
// that every caller handles it the same way.
type Error struct {
	// Code is the api_errors_total label, one of Codes.
	Code    string
	HTTP    int
	Message string
	// RetryAfter is the least time to wait before calling again.
	RetryAfter time.Duration
	// Retryable errors may be retried at once by the transport.
	Retryable bool
	// Pause, when set, stops every call of the API for that long (bad
	// credential, quota used, rate limited); PauseUntil wins when set.
	Pause      time.Duration
	PauseUntil time.Time
	// Credential says the pause is the credential's fault: a reload lifts
	// it; a rate or quota pause outlives reloads.
	Credential bool
	// Hold stops calls of this one tuple for that long (not retryable).
	Hold time.Duration
	// Refused says the key's plan does not include what was asked: nothing
	// is paused, the request is held for PlanHold or until the plan may
	// have changed. Its Code is PlanRefused.
	Refused bool
	// Word is the upstream's own code of a refused request, as one of
	// Codes, which api_errors_total counts it by (rules branch on the
	// provider's codes); empty for a refusal before sending, not counted.
	Word string
	// Gone says the series does not exist as asked: its last value is not
	// served.
	Gone bool
	// HeldBack says the request was never sent: rate_limit or
	// daily_budget had no turn for it (HeldBy) until RetryAfter. A wait,
	// not a failure.
	HeldBack bool
	// TooLarge says the answer was longer than MaxBody and not read.
	TooLarge bool
	// Details are for the log line; an upstream code outside Codes is
	// kept here (code=...).
	Details string
	// URL is the address asked for, credential masked (ShownURL); empty
	// when no request was made.
	URL string
}

// The limit label values of calls_held_back_total.
const (
	HeldByRateLimit   = "rate_limit"
	HeldByDailyBudget = "daily_budget"
)

// HeldBy is the limit that held a call back; "" for a call that was sent.
func (e *Error) HeldBy() string {
	switch {
	case !e.HeldBack:
		return ""
	case e.Code == "budget_exhausted":
		return HeldByDailyBudget
	}
	return HeldByRateLimit
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Code)
	if e.HTTP != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.HTTP)
	}
	if e.Message != "" && e.Message != e.Code {
		b.WriteString(": " + e.Message)
	}
	if e.Details != "" {
		b.WriteString(" [" + e.Details + "]")
	}
	if e.URL != "" {
		b.WriteString(" for GET " + e.URL)
	}
	return b.String()
}

// credentialParams are query parameters that carry a credential (auth:
// query).
var credentialParams = map[string]bool{"api_key": true}

// ShownQuery is a query as logs and the page show it, by ShownURL's rule.
func ShownQuery(q url.Values) string {
	return strings.TrimPrefix(ShownURL(&url.URL{RawQuery: q.Encode()}), "?")
}

// ShownURL is a request URL as a message may show it: credential
// parameters masked, no user information.
func ShownURL(u *url.URL) string {
	c := *u
	c.User = nil
	c.RawQuery = ""
	c.Fragment = ""
	q := u.Query()
	if len(q) == 0 {
		return c.String()
	}
	var b strings.Builder
	b.WriteString(c.String())
	b.WriteByte('?')
	for i, k := range slices.Sorted(maps.Keys(q)) {
		for j, v := range q[k] {
			if i+j > 0 {
				b.WriteByte('&')
			}
			b.WriteString(url.QueryEscape(k))
			b.WriteByte('=')
			if credentialParams[strings.ToLower(k)] {
				b.WriteString("<redacted>")
			} else {
				b.WriteString(url.QueryEscape(v))
			}
		}
	}
	return b.String()
}

// AsError is err as an *Error; another error is a transport one.
func AsError(err error) *Error {
	var ae *Error
	if errors.As(err, &ae) {
		return ae
	}
	return &Error{Code: "transport", Message: err.Error(), Retryable: true}
}

// Back-off lengths for errors that retrying at once cannot fix.
const (
	AuthPause    = 30 * time.Minute // bad or unentitled credential: until reload or this
	HoldNotFound = time.Hour        // a request the upstream rejects as malformed or unknown
	defaultRetry = time.Minute      // rate limited without a Retry-After
	// PlanHold is how long a request the plan refuses is held: a plan
	// changes when the user changes it, not by waiting.
	PlanHold = 24 * time.Hour
)

// PlanRefused is the code of a request the key's plan does not include.
const PlanRefused = "plan_refused"

// refusedByPlan says whether an error answer is the plan's refusal of one
// request rather than the key's: a 403 (API-FACTS.md), the word
// plan_required (the dialects pass required_plans as it), or a 401 whose
// message names a plan.
func refusedByPlan(status int, word, message string) bool {
	return strings.EqualFold(word, "plan_required") || status == 403 || status == 401 && strings.Contains(strings.ToLower(message), "plan")
}

// refuse makes e the plan's refusal of its request: held, never a pause.
func refuse(e *Error, word string) *Error {
	if word == "" {
		word = statusCode(e.HTTP)
	}
	if word != PlanRefused {
		e.Details = strings.TrimSpace("code=" + word + " " + e.Details)
	}
	e.Word = e.Code // the upstream's word, or its status's (httpError)
	if Codes[word] && word != OtherCode {
		e.Word = word
	}
	e.Code, e.Refused, e.Hold = PlanRefused, true, PlanHold
	e.Pause, e.PauseUntil, e.Credential, e.Retryable = 0, time.Time{}, false, false
	return e
}

// statusWords are the data API's words per HTTP status.
var statusWords = map[int]string{
	400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
	405: "not_allowed", 429: "too_many_requests", 500: "internal_server_error",
}

// httpError classifies an error answer by its HTTP status. word is the
// upstream's own code, if any: the error's code when one of Codes, else
// kept in the details.
func httpError(status int, word, message string, h http.Header, now time.Time) *Error {
	code := word
	if !Codes[code] || code == OtherCode {
		code = statusCode(status)
	}
	e := &Error{Code: code, HTTP: status, Message: message}
	if word != "" && word != code && word != strings.ToLower(strings.TrimSpace(message)) {
		e.Details = "code=" + word
	}
	if refusedByPlan(status, word, message) {
		return refuse(e, word)
	}
	switch {
	case status == 401:
		e.Pause, e.Credential = AuthPause, true
	case status == 429:
		e.RetryAfter = cmp.Or(retryAfter(h, now), defaultRetry)
		e.Pause = e.RetryAfter
	case status == 400 || status == 404 || status == 405:
		e.Hold, e.Gone = HoldNotFound, true
	case status >= 500:
		e.Retryable = true
		e.RetryAfter = retryAfter(h, now)
	}
	return e
}

// maxRetryAfter bounds what an upstream can ask us to wait: a daily
// quota's wait, until midnight.
const maxRetryAfter = 24 * time.Hour

// retryAfter reads Retry-After (seconds or an HTTP date), at most a day.
func retryAfter(h http.Header, now time.Time) time.Duration {
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil && s >= 0 {
		return secondsAtMostADay(s)
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return min(t.Sub(now), maxRetryAfter)
	}
	return 0
}

// secondsAtMostADay converts a count of seconds without overflowing.
func secondsAtMostADay(s int64) time.Duration {
	return time.Duration(min(s, int64(maxRetryAfter/time.Second))) * time.Second
}

// envelopeStatus is the data API's status object.
type envelopeStatus struct {
	Code    json.Number `json:"code"`
	Message string      `json:"message"`
}

// statusWord reduces a status message to a label-safe word: the message
// when it is one word, else the word for the HTTP code.
func statusWord(status int, message string) string {
	m := strings.ToLower(strings.TrimSpace(message))
	if m != "" && len(m) <= 40 && strings.IndexFunc(m, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r == '_')
	}) < 0 {
		return m
	}
	return ""
}
