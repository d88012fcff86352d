package upstream

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
)

// consensusDialect: key in X-API-Key (or api_key with auth: query); every
// error is one JSON object whose stable `code` decides the handling.
type consensusDialect struct{}

func (consensusDialect) authorize(req *http.Request, q url.Values, a *config.API) {
	if a.Token() == "" {
		return
	}
	if a.Auth == "query" {
		q.Set("api_key", string(a.Token()))
		return
	}
	req.Header.Set("X-API-Key", string(a.Token()))
}

func (consensusDialect) defaultRows() string { return "data" }

// consensusError is the Analyst Consensus API's error body.
// Fields not read are declared all the same: a body whose field is of
// another type is no error body of the API (json.Unmarshal fails).
type consensusError struct {
	Error         string   `json:"error"`
	Code          string   `json:"code"`
	Message       string   `json:"message"`
	DocsURL       string   `json:"docs_url"`
	Param         string   `json:"param"`
	Plan          string   `json:"plan"`
	RequiredPlans []string `json:"required_plans"`
	UpgradeURL    string   `json:"upgrade_url"`
	UpgradeURL2   string   `json:"upgradeUrl"`
	ContactURL    string   `json:"contact_url"`
	ContactEmail  string   `json:"contact_email"`
	Limit         *int64   `json:"limit"`
	Used          *int64   `json:"used"`
	RetryAfter    *int64   `json:"retry_after"`
}

func (consensusDialect) answer(any, int, http.Header, time.Time) *Error { return nil }

func (consensusDialect) check(status int, h http.Header, body []byte, now time.Time) *Error {
	var b consensusError
	if json.Unmarshal(body, &b) != nil || !isCode(b.Code) {
		return httpError(status, "", "", h, now)
	}
	e := &Error{Code: b.Code, HTTP: status, Message: b.Message}
	var details []string
	if b.Param != "" {
		details = append(details, "param="+b.Param)
	}
	if b.Plan != "" {
		details = append(details, "plan="+b.Plan)
	}
	if len(b.RequiredPlans) > 0 {
		details = append(details, "required_plans="+strings.Join(b.RequiredPlans, ","))
	}
	if b.Limit != nil && b.Used != nil {
		details = append(details, fmt.Sprintf("used=%d/%d", *b.Used, *b.Limit))
	}
	switch b.Code {
	case "PLAN_REQUIRED":
		e.Details = strings.Join(details, " ")
		return refuse(e, b.Code) // this endpoint, not the key, is out of reach
	case "API_KEY_REQUIRED":
		e.Hold = AuthPause // this endpoint, not the key, is out of reach
	case "INVALID_API_KEY":
		e.Pause, e.Credential = AuthPause, true // the key itself is bad: every call would fail
	case "RAW_ACCESS_REQUIRED":
		e.Hold = AuthPause // Client.Get drops source_text and asks again
	case "DAILY_LIMIT_EXCEEDED":
		y, m, d := now.UTC().Date()
		e.PauseUntil = time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC) // the next UTC midnight
	case "RATE_LIMIT_EXCEEDED":
		var asked time.Duration // the body's retry_after, beside the header's
		if b.RetryAfter != nil {
			asked = secondsAtMostADay(*b.RetryAfter)
		}
		e.RetryAfter = cmp.Or(max(retryAfter(h, now), asked), defaultRetry)
		e.Pause = e.RetryAfter
	case "INVALID_PARAMETER", "UNKNOWN_ASSET", "ANALYST_NOT_FOUND", "ANALYST_NOT_ELIGIBLE", "NO_DATA":
		e.Hold, e.Gone = HoldNotFound, true
		if b.Code == "UNKNOWN_ASSET" {
			details = append(details, "resolve the asset through /assets")
		}
	case "SERVICE_UNAVAILABLE", "INTERNAL_ERROR":
		e.Retryable = true
		e.RetryAfter = retryAfter(h, now)
	default: // not a code of SPEC.md: classified by its HTTP status
		return httpError(status, b.Code, b.Message, h, now)
	}
	e.Details = strings.Join(details, " ")
	return e
}

// isCode says whether an upstream error code may become a label value: a
// short word of letters, digits and underscores.
func isCode(s string) bool {
	return s != "" && len(s) <= 64 && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_')
	}) < 0
}
