package plan

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

// Path is the data API's endpoint that describes the plan of the key
// that asks.
const Path = "/v1/my/discovery/endpoints"

// maxAnswer bounds the plan answer taken: a few hundred endpoints take a
// few tens of kilobytes.
const maxAnswer = 16 << 20

// Kind is what reading the plan came to.
type Kind int

// The outcomes of reading the plan.
const (
	// Read: the answer was a plan.
	Read Kind = iota + 1
	// NoEndpoint: the upstream has no plan endpoint (404).
	NoEndpoint
	// Basic: 403 or 500, which the provider's own client reads as the
	// basic plan with nothing listed.
	Basic
	// Rejected: 401, the key itself is refused.
	Rejected
	// Unknown: any other failure (another status, an answer that is not
	// a plan, the call failed); the data calls decide.
	Unknown
)

// Outcome is the result of reading a key's plan. Only a Read outcome holds
// a Plan; the others mean the exporter works from the public discovery
// alone, which String says in one line for the caller to log once.
type Outcome struct {
	Kind Kind
	Plan *Plan
	// Status is the HTTP status, or the envelope's status.code when an
	// HTTP 200 carried another; 0 when no answer came.
	Status int
	// Err says what failed (Unknown), never with the key in it.
	Err error
}

// String says the outcome in one line, for the log and the check.
func (o Outcome) String() string {
	const alone = "working from the public discovery alone"
	switch o.Kind {
	case Read:
		return fmt.Sprintf("plan %s: %d paths with windows, %d always allowed, rate limit %s",
			o.Plan.Name, len(o.Plan.Paths), len(o.Plan.Statics), o.Plan.RateLimit)
	case NoEndpoint:
		return fmt.Sprintf("the upstream has no plan endpoint (%d): %s", o.Status, alone)
	case Basic:
		return fmt.Sprintf("the plan endpoint answered %d, read as the basic plan with nothing listed: %s", o.Status, alone)
	case Rejected:
		return fmt.Sprintf("the plan endpoint refused the key (%d): %s", o.Status, alone)
	}
	return fmt.Sprintf("the plan could not be read (%v): %s; the data calls decide", o.Err, alone)
}

// classify turns a status other than 200 into its outcome.
func classify(status int) Outcome {
	switch status {
	case http.StatusNotFound:
		return Outcome{Kind: NoEndpoint, Status: status}
	case http.StatusForbidden, http.StatusInternalServerError:
		return Outcome{Kind: Basic, Status: status}
	case http.StatusUnauthorized:
		return Outcome{Kind: Rejected, Status: status}
	}
	return Outcome{Kind: Unknown, Status: status, Err: fmt.Errorf("status %d %s", status, http.StatusText(status))}
}

// Answer is the Outcome of an answer of Path read through a client of the
// caller's: its HTTP status and body, or err when no answer came (then
// status may still say what the client saw). An HTTP 200 whose envelope
// carries another status.code counts as that status.
func Answer(status int, body []byte, err error) Outcome {
	if err != nil && status == 0 {
		return Outcome{Kind: Unknown, Err: err}
	}
	if status/100 != 2 {
		return classify(status)
	}
	if len(body) > maxAnswer {
		return Outcome{Kind: Unknown, Status: status, Err: fmt.Errorf("the answer is larger than %d bytes", maxAnswer)}
	}
	var env struct {
		Status struct {
			Code json.Number `json:"code"`
		} `json:"status"`
	}
	if json.Unmarshal(body, &env) == nil && env.Status.Code != "" && env.Status.Code != "200" {
		if code, err := strconv.Atoi(env.Status.Code.String()); err == nil && code != 0 {
			return classify(code)
		}
	}
	p, err := Parse(body)
	if err != nil {
		return Outcome{Kind: Unknown, Status: status, Err: err}
	}
	return Outcome{Kind: Read, Plan: p, Status: status}
}
