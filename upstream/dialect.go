package upstream

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
)

// dialect is what differs between the three APIs: how the credential is
// sent, how an answer says it failed, and where rows sit by default.
type dialect interface {
	authorize(req *http.Request, q url.Values, a *config.API)
	// check returns nil for an answer that carries data.
	check(status int, h http.Header, body []byte, now time.Time) *Error
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
		return &Error{Code: "decode", HTTP: status, Message: "invalid JSON: " + ShortJSONError(decodeErr)}
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

func (indicatorDialect) check(status int, h http.Header, body []byte, now time.Time) *Error {
	if status >= 200 && status <= 299 {
		if !json.Valid(body) {
			return &Error{Code: "decode", HTTP: status, Message: "invalid JSON"}
		}
		return nil
	}
	var e struct {
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	_ = json.Unmarshal(body, &e)
	return httpError(status, statusWord(status, e.Error), e.Message, h, now)
}

// ShortJSONError keeps decoder errors short and free of payload text.
func ShortJSONError(err error) string {
	s := err.Error()
	if i := strings.Index(s, " looking for"); i > 0 {
		s = s[:i]
	}
	if len(s) > 120 {
		s = s[:120]
	}
	return s
}

// DefaultRows is where an API's answers hold their rows, as a dotted path.
func DefaultRows(api string) string { return dialectFor(api).defaultRows() }
