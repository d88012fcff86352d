package upstream

import (
	"encoding/json"
	"github.com/onchain-exporter/onchain_exporter/decode"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
)

// dialect is what differs between the three APIs: how the credential is
// sent, how an answer says it failed, and where rows sit by default.
type dialect interface {
	authorize(req *http.Request, q url.Values, a *config.API)
	// check reads the error an answer outside 2xx carries.
	check(status int, h http.Header, body []byte, now time.Time) *Error
	// answer returns nil for a 2xx answer, parsed, that carries data.
	answer(root any, status int, h http.Header, now time.Time) *Error
	defaultRows() string
}

func dialectFor(api string) dialect {
	switch api {
	case config.APIIndicator:
		return indicatorDialect{}
	case config.APIConsensus:
		return consensusDialect{}
	}
	return dataDialect{}
}

// dataDialect: bearer or api_key; errors in the status/result envelope, also
// behind an HTTP 200.
type dataDialect struct{}

func (dataDialect) authorize(req *http.Request, q url.Values, a *config.API) {
	if a.Auth == "query" {
		q.Set("api_key", string(a.Token()))
		return
	}
	req.Header.Set("Authorization", "Bearer "+string(a.Token()))
}

func (dataDialect) defaultRows() string { return "result.data" }

// answer: an HTTP 200 whose status.code is not 200 is an error.
func (dataDialect) answer(root any, status int, h http.Header, now time.Time) *Error {
	st, ok := decode.Lookup(root, "status")
	obj, isObj := st.(map[string]any)
	if !ok || !isObj {
		return &Error{Code: "decode", HTTP: status, Message: "answer has no status object"}
	}
	message, _ := obj["message"].(string)
	if code := atoi(obj["code"]); code != 200 {
		return httpError(code, statusWord(code, message), message, h, now)
	}
	return nil
}

func (dataDialect) check(status int, h http.Header, body []byte, now time.Time) *Error {
	var env struct {
		Status        *envelopeStatus `json:"status"`
		RequiredPlans []string        `json:"required_plans"`
	}
	decodeErr := json.Unmarshal(body, &env)
	code, message := 0, ""
	if decodeErr == nil && env.Status != nil {
		code, message = atoi(env.Status.Code), env.Status.Message
	}
	if len(env.RequiredPlans) > 0 {
		// A plan is named: the request, not the key, is refused.
		return httpError(status, "plan_required", message, h, now)
	}
	if status < 200 || status > 299 {
		return httpError(status, statusWord(status, message), message, h, now)
	}
	if decodeErr != nil {
		return &Error{Code: "decode", HTTP: status, Message: "invalid JSON: " + decode.ShortJSONError(decodeErr)}
	}
	if env.Status == nil {
		return &Error{Code: "decode", HTTP: status, Message: "answer has no status object"}
	}
	if code != 200 {
		return httpError(code, statusWord(code, message), message, h, now)
	}
	return nil
}

// atoi is a status code given as a number or a string; 0 when it is not
// one.
func atoi(v any) int {
	s, _ := v.(string)
	if n, ok := v.(json.Number); ok {
		s = n.String()
	}
	n, _ := strconv.Atoi(s)
	return n
}

// indicatorDialect: bearer key on value endpoints; errors as
// {"error": word, "message": text}.
type indicatorDialect struct{}

func (indicatorDialect) authorize(req *http.Request, _ url.Values, a *config.API) {
	if a.Token() != "" {
		req.Header.Set("Authorization", "Bearer "+string(a.Token()))
	}
}

func (indicatorDialect) defaultRows() string { return "data" }

func (indicatorDialect) answer(any, int, http.Header, time.Time) *Error { return nil }

func (indicatorDialect) check(status int, h http.Header, body []byte, now time.Time) *Error {
	var e struct {
		Error         string   `json:"error"`
		Message       string   `json:"message"`
		RequiredPlans []string `json:"required_plans"`
	}
	_ = json.Unmarshal(body, &e)
	word := statusWord(status, e.Error)
	if len(e.RequiredPlans) > 0 {
		word = "plan_required"
	}
	err := httpError(status, word, e.Message, h, now)
	if err.Refused {
		// Access to the Indicator API starts at one plan (SPEC.md): a
		// refusal is the key's, as a rejected credential's is.
		err.Code, err.Details, err.Refused, err.Hold = word, "", false, 0
		if err.Code == "" {
			err.Code = statusCode(status)
		}
		err.Pause, err.Credential = AuthPause, true
	}
	return err
}

// DefaultRows is where an API's answers hold their rows, as a dotted path.
func DefaultRows(api string) string { return dialectFor(api).defaultRows() }
