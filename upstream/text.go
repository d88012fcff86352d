package upstream

import (
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/internal/text"
)

// Texts an upstream sends reach logs, errors, the page and state files:
// they leave without the credential (scrubber), cut (Cut), and a code
// becomes a label value only when the exporter knows it (Codes).

// MaxText is the most of one upstream text that is kept or logged: real
// messages are a sentence.
const MaxText = 512

// Cut returns s cut to MaxText bytes on a character boundary, saying how
// much was cut, and inert (text.Outside: U+202E, ESC or BEL as \u{…}).
func Cut(s string) string {
	p := text.Prefix(s, MaxText)
	shown := text.Outside(p, len(`\u{10FFFF}`)*len(p)) // escaped whole: the cut is MaxText's
	if len(p) == len(s) {
		return shown
	}
	return fmt.Sprintf("%s… (%d more bytes cut)", shown, len(s)-len(p))
}

// redacted stands for a credential in a text.
const redacted = "<secret>"

// scrubber removes a client's secrets from texts, in every form an echo
// may take: the credential, the proxy's password and CONNECT headers.
type scrubber struct {
	forms []string // longest first, so that no form leaves part of another
}

func newScrubber(a *config.API) scrubber {
	secrets := []string{string(a.Token())}
	if u := a.HTTPClient.ProxyURL.URL; u != nil && u.User != nil {
		if pw, ok := u.User.Password(); ok {
			secrets = append(secrets, pw)
		}
	}
	for _, vs := range a.HTTPClient.ProxyConnectHeader {
		for _, v := range vs {
			secrets = append(secrets, string(v))
		}
	}
	var s scrubber
	for _, v := range secrets {
		if v == "" {
			continue
		}
		for _, f := range []string{v, url.QueryEscape(v), url.PathEscape(v), strconv.Quote(v)[1 : len(strconv.Quote(v))-1]} {
			if !slices.Contains(s.forms, f) {
				s.forms = append(s.forms, f)
			}
		}
	}
	slices.SortFunc(s.forms, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	return s
}

// text returns t without the secrets.
func (s scrubber) text(t string) string {
	for _, f := range s.forms {
		if strings.Contains(t, f) {
			t = strings.ReplaceAll(t, f, redacted)
		}
	}
	return t
}

// Clean is an upstream text as it may be logged or kept: without the
// client's secrets, and cut.
func (u *Client) Clean(t string) string { return Cut(u.scrub.text(t)) }

// Clean is Client.Clean by the API's client in the pool.
func (p *Pool) Clean(api, t string) string {
	if c := p.Current(api); c != nil {
		return c.Clean(t)
	}
	return Cut(t)
}

// clean readies an error for counting, logging and keeping: its texts
// cleaned, its code one of Codes (another is kept in the details).
func (u *Client) clean(e *Error) {
	e.Message = u.Clean(e.Message)
	if code := labelCode(e.Code); code != e.Code {
		e.Details = strings.TrimSpace("code=" + e.Code + " " + e.Details)
		e.Code = code
	}
	e.Details = u.Clean(e.Details)
}

// Codes are the values of the code label of api_errors_total and
// api_paused: the Analyst Consensus API's codes (SPEC.md) and their
// lower-case forms (which the Indicator API's words share), the data
// API's status words, http_<status>, the exporter's own, and OtherCode,
// so that a new word at every call adds no series.
var Codes = func() map[string]bool {
	m := map[string]bool{OtherCode: true}
	for _, c := range []string{
		"API_KEY_REQUIRED", "INVALID_API_KEY", "PLAN_REQUIRED", "RAW_ACCESS_REQUIRED", "DAILY_LIMIT_EXCEEDED",
		"RATE_LIMIT_EXCEEDED", "INVALID_PARAMETER", "UNKNOWN_ASSET", "ANALYST_NOT_FOUND", "ANALYST_NOT_ELIGIBLE",
		"NO_DATA", "SERVICE_UNAVAILABLE", "INTERNAL_ERROR",
	} {
		m[c], m[strings.ToLower(c)] = true, true
	}
	for _, c := range []string{"timeout", "transport", "request", "decode", "paused", "rate_limited", "no_data", "bad_value", "budget_exhausted", "family_conflict", "future_row", "fields_over", PlanRefused} {
		m[c] = true
	}
	for status := 100; status < 600; status++ {
		if http.StatusText(status) != "" {
			m[statusCode(status)] = true
		}
	}
	return m
}()

// OtherCode is the code of an error whose own code the exporter does not
// know.
const OtherCode = "other"

// labelCode is code when it is one of Codes, else OtherCode.
func labelCode(code string) string {
	if Codes[code] {
		return code
	}
	return OtherCode
}

// statusCode is the code of an HTTP status: the data API's word for it,
// http_<status> for another standard status, OtherCode for the rest.
func statusCode(status int) string {
	if w := statusWords[status]; w != "" {
		return w
	}
	if http.StatusText(status) != "" {
		return "http_" + strconv.Itoa(status)
	}
	return OtherCode
}

// statusLabel is the code label of upstream_requests_total: the status
// when it is a standard one, else OtherCode.
func statusLabel(status int) string {
	if http.StatusText(status) != "" {
		return strconv.Itoa(status)
	}
	return OtherCode
}
