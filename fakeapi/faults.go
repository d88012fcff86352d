package fakeapi

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"time"
)

// FaultKind is a way the upstream can misbehave.
type FaultKind int

// Fault kinds.
const (
	FaultNone        FaultKind = iota
	Slow                       // sleep Delay before the headers (a cancelled request stops waiting)
	SlowBody                   // write half the body, sleep Delay, write the rest
	ConnReset                  // hijack the connection and reset it without an answer
	Status500                  // 500 in the API's error shape
	Status503                  // 503 in the API's error shape
	TooManyRequests            // 429 with Retry-After (and retry_after in consensus bodies)
	InvalidJSON                // 200 with a body that is not JSON
	TruncatedJSON              // the valid body cut in half
	EmptyData                  // valid answer whose data list is empty
	StatusMismatch             // HTTP 200 with an error inside (data: status.code 500)
	NumbersAsStrings           // numeric row values as JSON strings
	NonFinite                  // numeric row values as "NaN"/"Infinity" strings and 1e999 literals
	HugeBody                   // a valid-looking 64 MiB body, streamed
	Unauthorized               // 401 for everything, in each API's own error shape
	Redirect                   // 302 to Fault.Location
)

var faultNames = [...]string{"FaultNone", "Slow", "SlowBody", "ConnReset", "Status500", "Status503",
	"TooManyRequests", "InvalidJSON", "TruncatedJSON", "EmptyData", "StatusMismatch", "NumbersAsStrings",
	"NonFinite", "HugeBody", "Unauthorized", "Redirect"}

func (k FaultKind) String() string { return enumName(faultNames[:], "FaultKind", k) }

// Fault describes one misbehaviour of an API.
type Fault struct {
	Kind FaultKind
	// PathPrefix limits the fault to requests whose full URL path starts
	// with it (mount prefix included); "" means every request.
	PathPrefix string
	Delay      time.Duration // Slow, SlowBody
	RetryAfter int           // seconds, TooManyRequests
	Location   string        // absolute URL, Redirect
}

// hugeBodySize is the size of a HugeBody answer.
const hugeBodySize = 64 << 20

// capture records an answer so that a fault can alter it.
type capture struct {
	h    http.Header
	code int
	body bytes.Buffer
}

func (c *capture) Header() http.Header         { return c.h }
func (c *capture) WriteHeader(code int)        { c.code = code }
func (c *capture) Write(b []byte) (int, error) { return c.body.Write(b) }

func (s *Server) captured(r *http.Request, api string) *capture {
	c := &capture{h: http.Header{}, code: http.StatusOK}
	s.serveAPI(c, r, api)
	return c
}

// writeHead writes the captured status and headers, announcing length
// bytes of body.
func (c *capture) writeHead(w http.ResponseWriter, length int) {
	for k, v := range c.h {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Length", strconv.Itoa(length))
	w.WriteHeader(c.code)
}

// send writes the captured answer with body in place of its own.
func (c *capture) send(w http.ResponseWriter, body []byte) {
	c.writeHead(w, len(body))
	_, _ = w.Write(body)
}

// faultStatus is the HTTP status of the faults that answer an error.
var faultStatus = map[FaultKind]int{Status500: http.StatusInternalServerError, Status503: http.StatusServiceUnavailable,
	TooManyRequests: http.StatusTooManyRequests, Unauthorized: http.StatusUnauthorized}

// writeAPIError answers with code in the error shape of api; retryAfter
// (seconds) is told only with 429.
func (s *Server) writeAPIError(w http.ResponseWriter, r *http.Request, api string, code, retryAfter int) {
	if code == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	}
	switch api {
	case apiData:
		writeEnvelopeError(w, code)
	case apiIndicator:
		word := map[int]string{401: "unauthorized", 429: "too_many_requests", 500: "internal_error", 503: "service_unavailable"}[code]
		writeIndicatorError(w, code, word, http.StatusText(code))
	default:
		id, _ := s.identify(r)
		now := s.now()
		s.rate(w, id, now, false)
		writeConsensusError(w, now, &apiError{RetryAfter: retryAfter,
			Code: map[int]string{401: "INVALID_API_KEY", 429: "RATE_LIMIT_EXCEEDED", 500: "INTERNAL_ERROR", 503: "SERVICE_UNAVAILABLE"}[code]})
	}
}

// serveFault answers r as fault f of api prescribes.
func (s *Server) serveFault(w http.ResponseWriter, r *http.Request, api string, f Fault) {
	ctx := r.Context()
	switch f.Kind {
	case Slow:
		if sleepCtx(ctx, f.Delay) {
			s.serveAPI(w, r, api)
		}
	case SlowBody:
		c := s.captured(r, api)
		body := c.body.Bytes()
		half := len(body) / 2
		c.writeHead(w, len(body))
		_, _ = w.Write(body[:half])
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
		if sleepCtx(ctx, f.Delay) {
			_, _ = w.Write(body[half:])
		}
	case ConnReset:
		hj, ok := w.(http.Hijacker)
		if !ok {
			panic(http.ErrAbortHandler)
		}
		conn, _, err := hj.Hijack()
		if err != nil {
			panic(http.ErrAbortHandler)
		}
		if tc, ok := conn.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		_ = conn.Close()
	case Status500, Status503, TooManyRequests, Unauthorized:
		s.writeAPIError(w, r, api, faultStatus[f.Kind], max(f.RetryAfter, 1))
	case Redirect:
		w.Header().Set("Location", f.Location)
		w.WriteHeader(http.StatusFound)
	case InvalidJSON:
		body := `{"data":[{"date": 2026-11-20, "value": 12.5,}` + "\n"
		if api == apiData {
			body = `{"status":{"code":200,"message":"success"},"result":{"window":"day","data":[{"date": 2026-11-20, value: 12.5}` + "\n"
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write([]byte(body))
	case TruncatedJSON:
		c := s.captured(r, api)
		c.send(w, c.body.Bytes()[:c.body.Len()/2])
	case StatusMismatch:
		if api == apiIndicator {
			writeIndicatorError(w, http.StatusOK, "internal_error", "Internal server error.")
			return
		}
		if api == apiConsensus {
			_, body := consensusErrorBody(w, s.now(), &apiError{Code: "INTERNAL_ERROR"})
			writeJSON(w, http.StatusOK, body)
			return
		}
		s.serveTransformed(w, r, api, f.Kind)
	case EmptyData, NumbersAsStrings, NonFinite:
		s.serveTransformed(w, r, api, f.Kind)
	case HugeBody:
		streamHugeBody(w, r, api)
	default:
		s.serveAPI(w, r, api)
	}
}

// serveTransformed serves the normal answer with its rows altered; an
// answer that is not a 200 JSON object passes unchanged.
func (s *Server) serveTransformed(w http.ResponseWriter, r *http.Request, api string, kind FaultKind) {
	c := s.captured(r, api)
	body := c.body.Bytes()
	if c.code == http.StatusOK {
		if out, ok := transform(api, kind, body); ok {
			body = out
		}
	}
	c.send(w, body)
}

// transform applies kind to the rows of a JSON answer, keeping member
// order.
func transform(api string, kind FaultKind, body []byte) ([]byte, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	v, err := decodeOrdered(dec)
	root, ok := v.(obj)
	if err != nil || !ok {
		return nil, false
	}
	holder := root
	if api == apiData {
		if res, ok := root.get("result"); ok {
			holder, _ = res.(obj)
		}
	}
	data, _ := holder.get("data")
	switch kind {
	case StatusMismatch:
		if st, ok := root.get("status"); ok {
			if st, ok := st.(obj); ok {
				st.set("code", 500)
				st.set("message", statusWords[500])
			}
		}
	case EmptyData:
		if _, isObj := data.(obj); isObj {
			holder.set("data", obj{})
		} else {
			holder.set("data", []any{})
		}
	case NumbersAsStrings, NonFinite:
		rows, ok := data.([]any)
		if !ok {
			rows = []any{data}
		}
		for i, row := range rows {
			if row, ok := row.(obj); ok {
				pos := i
				alterNumbers(row, kind, &pos)
			}
		}
	}
	out, err := appendJSON(nil, root)
	return append(out, '\n'), err == nil
}

// nonFinite are the stand-ins NonFinite cycles through.
var nonFinite = [...]any{"NaN", json.Number("1e999"), "Infinity"}

// alterNumbers rewrites the numbers of a row, nested objects included;
// blockheight is a key of the row, not a value, and stays as it is.
func alterNumbers(o obj, kind FaultKind, pos *int) {
	for i, m := range o {
		switch v := m.V.(type) {
		case json.Number:
			if m.K == "blockheight" {
				continue
			}
			if kind == NumbersAsStrings {
				o[i].V = string(v)
			} else {
				o[i].V = nonFinite[*pos%len(nonFinite)]
				*pos++
			}
		case obj:
			alterNumbers(v, kind, pos)
		}
	}
}

// decodeOrdered reads one JSON value, objects as obj to keep their order.
func decodeOrdered(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil
	}
	switch d {
	case '{':
		o := obj{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeOrdered(dec)
			if err != nil {
				return nil, err
			}
			k, _ := kt.(string)
			o = append(o, kv{k, v})
		}
		_, err = dec.Token()
		return o, err
	default:
		a := []any{}
		for dec.More() {
			v, err := decodeOrdered(dec)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err = dec.Token()
		return a, err
	}
}

// streamHugeBody streams a valid-looking answer of about 64 MiB without
// holding it in memory, and stops as soon as the client goes away.
func streamHugeBody(w http.ResponseWriter, r *http.Request, api string) {
	prefix, suffix := `{"data":[`, "]}\n"
	if api == apiData {
		prefix, suffix = `{"status":{"code":200,"message":"success"},"result":{"window":"day","data":[`, "]}}\n"
	}
	const row = `{"date":"2026-11-20","value":123456.789}`
	chunk := bytes.Repeat([]byte(row+","), 32<<10/(len(row)+1))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	n, err := w.Write([]byte(prefix))
	for err == nil && n+len(chunk)+len(row)+len(suffix) <= hugeBodySize {
		if r.Context().Err() != nil {
			return
		}
		var m int
		m, err = w.Write(chunk)
		n += m
	}
	for err == nil && n+2*len(row)+1+len(suffix) <= hugeBodySize {
		var m int
		m, err = w.Write([]byte(row + ","))
		n += m
	}
	if err == nil {
		_, _ = w.Write([]byte(row + suffix))
	}
}
