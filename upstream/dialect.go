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
	code := 0
	switch c := obj["code"].(type) {
	case json.Number:
		if n, err := strconv.Atoi(c.String()); err == nil {
			code = n
		}
	case string:
		if n, err := strconv.Atoi(c); err == nil {
			code = n
		}
	}
	if code != 200 {
		return httpError(code, statusWord(code, message), message, h, now)
	}
	return nil
}

func (dataDialect) check(status int, h http.Header, body []byte, now time.Time) *Error {
	var env struct {
		Status *envelopeStatus `json:"status"`
	}
	decodeErr := json.Unmarshal(body, &env)
	code, message := 0, ""
	if decodeErr == nil && env.Status != nil {
		if c, err := strconv.Atoi(env.Status.Code.String()); err == nil {
			code = c
		}
		message = env.Status.Message
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
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	_ = json.Unmarshal(body, &e)
	return httpError(status, statusWord(status, e.Error), e.Message, h, now)
}

// DefaultRows is where an API's answers hold their rows, as a dotted path.
func DefaultRows(api string) string { return dialectFor(api).defaultRows() }
