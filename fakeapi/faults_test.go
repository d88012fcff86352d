package fakeapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// One representative URL path per API.
var faultURLs = map[string]string{
	apiData:      "/v1/btc/network-data/supply?limit=5",
	apiIndicator: "/indicator/api/equities/KRX:005930/pbr-band?limit=5",
	apiConsensus: "/consensus/consensus?asset=btc",
}

// startServer runs s on 127.0.0.1; the returned function waits until no
// request handler is running, and fails the test if none ends within a
// generous limit (a handler that never ends, not a slow machine).
func startServer(t *testing.T, s *Server) (*httptest.Server, func()) {
	t.Helper()
	var running atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		running.Add(1)
		defer running.Add(-1)
		s.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts, func() {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for running.Load() != 0 {
			if time.Now().After(deadline) {
				t.Fatal("handler still running after the client left")
			}
			time.Sleep(time.Millisecond)
		}
	}
}

type answer struct {
	code int
	hdr  http.Header
	body []byte
}

func fetch(t *testing.T, c *http.Client, url string) (answer, error) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, b}, err
}

func mustFetch(t *testing.T, url string) answer {
	t.Helper()
	a, err := fetch(t, http.DefaultClient, url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return a
}

// errorWord reads the error of a body in the API's own shape.
func errorWord(t *testing.T, api string, body []byte) string {
	t.Helper()
	m := decode(t, body)
	switch api {
	case apiData:
		st := m["status"].(map[string]any)
		return st["message"].(string)
	case apiConsensus:
		return m["code"].(string)
	}
	return m["error"].(string)
}

func TestStatusFaults(t *testing.T) {
	s, _ := newTestServer(Options{})
	ts, _ := startServer(t, s)
	want := map[FaultKind]map[string]string{
		Status500:       {apiData: "internal_server_error", apiIndicator: "internal_error", apiConsensus: "INTERNAL_ERROR"},
		Status503:       {apiData: "service_unavailable", apiIndicator: "service_unavailable", apiConsensus: "SERVICE_UNAVAILABLE"},
		TooManyRequests: {apiData: "too_many_requests", apiIndicator: "too_many_requests", apiConsensus: "RATE_LIMIT_EXCEEDED"},
		Unauthorized:    {apiData: "unauthorized", apiIndicator: "unauthorized", apiConsensus: "INVALID_API_KEY"},
	}
	status := map[FaultKind]int{Status500: 500, Status503: 503, TooManyRequests: 429, Unauthorized: 401}
	for kind, words := range want {
		for api, u := range faultURLs {
			s.SetFault(api, Fault{Kind: kind, RetryAfter: 7})
			a := mustFetch(t, ts.URL+u)
			if a.code != status[kind] || errorWord(t, api, a.body) != words[api] {
				t.Errorf("%v on %s: %d %s", kind, api, a.code, a.body)
			}
			if kind == TooManyRequests {
				if a.hdr.Get("Retry-After") != "7" {
					t.Errorf("%s: Retry-After %q", api, a.hdr.Get("Retry-After"))
				}
				if api == apiConsensus && intField(t, decode(t, a.body), "retry_after") != 7 {
					t.Errorf("consensus retry_after: %s", a.body)
				}
			}
			if api == apiData && a.hdr.Get("X-RateLimit-Limit") != "600" {
				t.Errorf("data fault without rate headers")
			}
		}
		s.ClearFaults()
	}
}

func TestBodyFaults(t *testing.T) {
	s, _ := newTestServer(Options{})
	ts, _ := startServer(t, s)
	for api, u := range faultURLs {
		normal := mustFetch(t, ts.URL+u)

		s.SetFault(api, Fault{Kind: InvalidJSON})
		if a := mustFetch(t, ts.URL+u); a.code != 200 || json.Valid(a.body) {
			t.Errorf("InvalidJSON on %s: %d %s", api, a.code, a.body)
		}

		s.SetFault(api, Fault{Kind: TruncatedJSON})
		if a := mustFetch(t, ts.URL+u); a.code != 200 || json.Valid(a.body) || len(a.body) != len(normal.body)/2 ||
			!strings.HasPrefix(string(normal.body), string(a.body)) {
			t.Errorf("TruncatedJSON on %s: %d %s", api, a.code, a.body)
		}

		s.SetFault(api, Fault{Kind: EmptyData})
		a := mustFetch(t, ts.URL+u)
		m := decode(t, a.body)
		if api == apiData {
			m = m["result"].(map[string]any)
		}
		if d, ok := m["data"].([]any); a.code != 200 || !ok || len(d) != 0 {
			t.Errorf("EmptyData on %s: %s", api, a.body)
		}

		s.SetFault(api, Fault{Kind: StatusMismatch})
		a = mustFetch(t, ts.URL+u)
		if a.code != 200 {
			t.Errorf("StatusMismatch on %s: HTTP %d", api, a.code)
		}
		switch api {
		case apiData:
			if e := parseEnvelope(t, &httptest.ResponseRecorder{Code: 200, Body: bytesBuffer(a.body)}); e.code != 500 {
				t.Errorf("StatusMismatch status.code %d", e.code)
			}
		default:
			if decode(t, a.body)["error"] == nil {
				t.Errorf("StatusMismatch on %s: %s", api, a.body)
			}
		}
		s.ClearFaults()
	}
}

func TestNumberFaults(t *testing.T) {
	s, _ := newTestServer(Options{})
	ts, _ := startServer(t, s)
	const u = "/v1/btc/network-data/supply?limit=4&window=block"
	s.SetFault(apiData, Fault{Kind: NumbersAsStrings})
	e := parseEnvelope(t, &httptest.ResponseRecorder{Body: bytesBuffer(mustFetch(t, ts.URL+u).body)})
	if e.code != 200 || len(e.rows) != 4 {
		t.Fatalf("NumbersAsStrings envelope: %+v", e)
	}
	for _, r := range e.rows {
		if v, ok := r["supply_total"].(string); !ok || v == "" {
			t.Errorf("supply_total %v (%T) is not a string", r["supply_total"], r["supply_total"])
		}
		num(t, r["blockheight"])
	}
	ind := mustFetch(t, ts.URL+faultURLs[apiIndicator])
	if _, ok := decode(t, ind.body)["data"].([]any)[0].(map[string]any)["close"].(json.Number); !ok {
		t.Error("a data API fault changed the indicator API")
	}

	s.SetFault(apiData, Fault{Kind: NonFinite})
	body := mustFetch(t, ts.URL+u).body
	if !strings.Contains(string(body), `"NaN"`) || !strings.Contains(string(body), `"Infinity"`) || !strings.Contains(string(body), ":1e999") {
		t.Errorf("NonFinite body %s", body)
	}
	s.SetFault(apiIndicator, Fault{Kind: NonFinite})
	if body := mustFetch(t, ts.URL+faultURLs[apiIndicator]).body; !strings.Contains(string(body), "1e999") {
		t.Errorf("NonFinite indicator body %s", body)
	}
}

func TestTransportFaults(t *testing.T) {
	s, _ := newTestServer(Options{})
	ts, idle := startServer(t, s)
	for api, u := range faultURLs {
		s.SetFault(api, Fault{Kind: ConnReset})
		if _, err := fetch(t, ts.Client(), ts.URL+u); err == nil {
			t.Errorf("ConnReset on %s: no error", api)
		}

		s.SetFault(api, Fault{Kind: Redirect, Location: "http://127.0.0.1:1/elsewhere"})
		c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		if a, err := fetch(t, c, ts.URL+u); err != nil || a.code != 302 || a.hdr.Get("Location") != "http://127.0.0.1:1/elsewhere" {
			t.Errorf("Redirect on %s: %v %d %v", api, err, a.code, a.hdr)
		}
		s.ClearFaults()
	}

	normal := mustFetch(t, ts.URL+faultURLs[apiData])
	s.SetFault(apiData, Fault{Kind: Slow, Delay: 80 * time.Millisecond})
	start := time.Now()
	if a := mustFetch(t, ts.URL+faultURLs[apiData]); string(a.body) != string(normal.body) || time.Since(start) < 80*time.Millisecond {
		t.Errorf("Slow: %v %s", time.Since(start), a.body)
	}

	// A client that gives up ends the wait.
	s.SetFault(apiData, Fault{Kind: Slow, Delay: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+faultURLs[apiData], nil)
	if _, err := http.DefaultClient.Do(req); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Slow with deadline: %v", err)
	}
	cancel()
	idle()

	// SlowBody sends the headers and half the body at once: with an hour
	// to wait for the rest, both arrive; the rest does not.
	s.SetFault(apiData, Fault{Kind: SlowBody, Delay: time.Hour})
	resp, err := http.Get(ts.URL + faultURLs[apiData])
	if err != nil {
		t.Fatal(err)
	}
	half := make([]byte, len(normal.body)/2)
	if _, err := io.ReadFull(resp.Body, half); err != nil || resp.ContentLength != int64(len(normal.body)) || string(half) != string(normal.body[:len(half)]) {
		t.Errorf("SlowBody: length %d, first half %q, %v", resp.ContentLength, half, err)
	}
	resp.Body.Close() // the client leaves: the handler ends
	idle()
	// And the rest comes after the delay.
	s.SetFault(apiData, Fault{Kind: SlowBody, Delay: 100 * time.Millisecond})
	start = time.Now()
	if a := mustFetch(t, ts.URL+faultURLs[apiData]); string(a.body) != string(normal.body) || time.Since(start) < 100*time.Millisecond {
		t.Errorf("SlowBody: whole body after %v: %s", time.Since(start), a.body)
	}
}

func TestHugeBody(t *testing.T) {
	s, _ := newTestServer(Options{})
	ts, idle := startServer(t, s)
	s.SetFault(apiConsensus, Fault{Kind: HugeBody})
	resp, err := http.Get(ts.URL + faultURLs[apiConsensus])
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || n < hugeBodySize-1024 || n > hugeBodySize {
		t.Errorf("HugeBody read %d bytes, err %v", n, err)
	}

	// Going away after the first MiB stops the stream.
	s.SetFault(apiData, Fault{Kind: HugeBody})
	resp, err = http.Get(ts.URL + faultURLs[apiData])
	if err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 64)
	_, _ = io.ReadFull(resp.Body, head)
	if !strings.HasPrefix(string(head), `{"status":{"code":200`) {
		t.Errorf("HugeBody starts %q", head)
	}
	_, _ = io.CopyN(io.Discard, resp.Body, 1<<20)
	resp.Body.Close()
	idle()
}

func TestFaultScopeAndCalls(t *testing.T) {
	s, _ := newTestServer(Options{Latency: 20 * time.Millisecond})
	ts, _ := startServer(t, s)
	s.SetFault("", Fault{Kind: Status503, PathPrefix: "/v1/btc/network-data/"})
	if a := mustFetch(t, ts.URL+"/v1/btc/network-data/supply"); a.code != 503 {
		t.Errorf("prefix match: %d", a.code)
	}
	if a := mustFetch(t, ts.URL+"/v1/xrp/network-data/velocity"); a.code != 200 {
		t.Errorf("prefix mismatch: %d", a.code)
	}
	s.SetFault("", Fault{Kind: Status500})
	for api, u := range faultURLs {
		if a := mustFetch(t, ts.URL+u); a.code != 500 {
			t.Errorf("all-API fault on %s: %d", api, a.code)
		}
	}
	s.SetFault(apiIndicator, Fault{})
	if a := mustFetch(t, ts.URL+faultURLs[apiIndicator]); a.code != 200 {
		t.Errorf("FaultNone did not clear: %d", a.code)
	}
	s.ClearFaults()
	start := time.Now()
	mustFetch(t, ts.URL+"/consensus/assets")
	if time.Since(start) < 20*time.Millisecond {
		t.Error("Latency not applied")
	}

	if s.Calls(apiData) != 3 || s.Calls(apiIndicator) != 2 || s.Calls(apiConsensus) != 2 || s.Calls("other") != 0 {
		t.Errorf("calls %d %d %d", s.Calls(apiData), s.Calls(apiIndicator), s.Calls(apiConsensus))
	}
	if s.CallsFor("/v1/btc/network-data/supply") != 2 || s.CallsFor("/consensus/assets") != 1 || s.CallsFor("/v1/btc") != 0 {
		t.Errorf("CallsFor supply %d", s.CallsFor("/v1/btc/network-data/supply"))
	}
	s.ResetCalls()
	if s.Calls(apiData) != 0 || s.CallsFor("/consensus/assets") != 0 {
		t.Error("ResetCalls left counts")
	}
	if Redirect.String() != "Redirect" || FaultKind(99).String() != "FaultKind(99)" {
		t.Error("FaultKind.String")
	}
}
