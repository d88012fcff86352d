package page

import (
	"fmt"
	"strings"
	"sync"

	"github.com/go-kit/log"
)

// Errors keeps the last error of each series as the refresh engine logged
// it: the engine publishes whether a series failed, not the error's text,
// and says the text once in a log line ("refresh failed; ...", with its
// api, endpoint, query and err). Errors is a go-kit logger that passes
// every line on unchanged and remembers that text, so the page shows the
// error in full beside the state. The text is what the log already holds,
// credentials taken out by the upstream client; the page masks it again
// (upstream.Pool.Clean) before it shows it.
type Errors struct {
	next log.Logger
	mu   sync.Mutex
	last map[errorKey]string
}

// errorKey names a series the way the engine's log lines do.
type errorKey struct{ api, endpoint, query string }

// maxErrors bounds what Errors keeps: more series than max_tuples allows
// an API (100 000) times the three APIs; past it, what was kept is dropped
// and learned again from the next lines.
const maxErrors = 300_000

// NewErrors wraps next.
func NewErrors(next log.Logger) *Errors {
	return &Errors{next: next, last: map[errorKey]string{}}
}

// Log passes the line on and keeps its error when it says a refresh
// failed or was refused.
func (x *Errors) Log(keyvals ...any) error {
	var k errorKey
	var msg, err string
	for i := 0; i+1 < len(keyvals); i += 2 {
		name, _ := keyvals[i].(string)
		switch name {
		case "msg":
			msg = fmt.Sprint(keyvals[i+1])
		case "api":
			k.api = fmt.Sprint(keyvals[i+1])
		case "endpoint":
			k.endpoint = fmt.Sprint(keyvals[i+1])
		case "query":
			k.query = fmt.Sprint(keyvals[i+1])
		case "err":
			err = fmt.Sprint(keyvals[i+1])
		}
	}
	if err != "" && k.endpoint != "" && (strings.HasPrefix(msg, "refresh failed") || strings.Contains(msg, "plan refuses")) {
		x.mu.Lock()
		if len(x.last) >= maxErrors {
			clear(x.last)
		}
		x.last[k] = msg + ": " + err
		x.mu.Unlock()
	}
	return x.next.Log(keyvals...)
}

// Last is the last error logged for a series, "" when none was.
func (x *Errors) Last(api, endpoint, query string) string {
	if x == nil {
		return ""
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.last[errorKey{api, endpoint, query}]
}
