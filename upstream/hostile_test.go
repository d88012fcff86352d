package upstream

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// An upstream that answers as an attacker or a broken server would.

// hostileToken has characters that a URL escapes, so that its escaped
// form differs from it.
const hostileToken = "tok/en+Secret=42"

type hostile struct {
	c    *Client
	reg  *prometheus.Registry
	logs *testtool.LogBuffer
}

// hostileClient is a client of api, sending hostileToken as auth says,
// whose upstream is handler.
func hostileClient(t *testing.T, api, auth string, handler http.HandlerFunc) *hostile {
	t.Helper()
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	base := srv.URL
	if api != config.APIData {
		base += "/" + api
	}
	path := map[string]string{config.APIData: "/v1/btc/network-data/supply", config.APIIndicator: "/api/equities/{equity}/pbr-band",
		config.APIConsensus: "/consensus"}[api]
	yml := fmt.Sprintf("%s:\n  url: %s\n  token_env: T\n  auth: %s\n  metrics:\n    - path: %s\n", api, base, auth, path)
	if api == config.APIIndicator {
		yml += "      equity: KRX:005930\n"
	}
	if api == config.APIConsensus {
		yml += "      asset: bitcoin\n"
	}
	cfg, err := config.Parse("t.yml", []byte(yml), func(string) string { return hostileToken })
	if err != nil {
		t.Fatal(err)
	}
	h := &hostile{reg: prometheus.NewRegistry(), logs: &testtool.LogBuffer{}}
	h.c = New(cfg.APIs[api], NewMetrics(h.reg), time.Now, log.NewLogfmtLogger(h.logs))
	t.Cleanup(h.c.Close)
	return h
}

// exposition is the text of every family the client's metrics hold.
func (h *hostile) exposition(t *testing.T) string {
	t.Helper()
	mfs, err := h.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, mf := range mfs {
		fmt.Fprintln(&b, mf.String())
	}
	return b.String()
}

// leaks says where a text shows the credential, in any form it was sent.
func leaks(text string) bool {
	for _, f := range []string{hostileToken, url.QueryEscape(hostileToken), url.PathEscape(hostileToken)} {
		if strings.Contains(text, f) {
			return true
		}
	}
	return false
}

// An upstream that echoes the credential in its error texts (a message, a
// code, a parameter, a JSON key) does not make it leave the exporter: not
// in the error, the log, or the metrics.
func TestEchoedCredentialIsScrubbed(t *testing.T) {
	escaped := url.QueryEscape(hostileToken)
	for _, tc := range []struct {
		name, api, auth string
		status          int
		body            string
	}{
		{"data message", config.APIData, "header", 401, `{"status":{"code":401,"message":"invalid request for key Bearer ` + hostileToken + `"}}`},
		{"data url", config.APIData, "query", 400, `{"status":{"code":400,"message":"bad https://x/v1?api_key=` + escaped + `&window=day"}}`},
		{"data envelope", config.APIData, "query", 200, `{"status":{"code":403,"message":"key ` + hostileToken + ` cannot read this"}}`},
		{"indicator word", config.APIIndicator, "header", 401, `{"error":"` + hostileToken + `","message":"rejected: ` + hostileToken + `"}`},
		{"consensus code", config.APIConsensus, "header", 401, `{"code":"KEY_REJECTED","message":"X-API-Key ` + hostileToken + ` unknown"}`},
		{"consensus param", config.APIConsensus, "query", 400, `{"code":"INVALID_PARAMETER","param":"api_key=` + escaped + `","message":"bad"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := hostileClient(t, tc.api, tc.auth, func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(tc.status)
				fmt.Fprint(w, tc.body)
			})
			_, err := h.c.Get(context.Background(), "/x", url.Values{"asset": {"bitcoin"}}, true)
			if err == nil {
				t.Fatal("no error")
			}
			if leaks(err.Error()) || !strings.Contains(err.Error(), redacted) {
				t.Errorf("error text: %s", err)
			}
			// What callers log of it, and what the client logs itself.
			_ = log.NewLogfmtLogger(h.logs).Log("err", err)
			if leaks(h.logs.String()) {
				t.Errorf("log:\n%s", h.logs.String())
			}
			if leaks(h.exposition(t)) {
				t.Errorf("metrics:\n%s", h.exposition(t))
			}
		})
	}
}

// Listing endpoints quote the keys of an answer in errors and logs.
func TestListScrubsWhatItQuotes(t *testing.T) {
	answer := `{"` + hostileToken + `":[{"a":1}],"b":[{"a":2}]}`
	h := hostileClient(t, config.APIConsensus, "header", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, answer) })
	_, err := h.c.List(context.Background(), "/assets", nil, true)
	if err == nil || leaks(err.Error()) || !strings.Contains(err.Error(), "several lists of rows") {
		t.Errorf("list error: %v", err)
	}
	answer = `{"` + hostileToken + `":[{"a":1}]}`
	if _, err := h.c.List(context.Background(), "/assets", nil, true); err != nil {
		t.Fatal(err)
	}
	if h.logs.Count("payload shape detected") != 1 || leaks(h.logs.String()) {
		t.Errorf("log:\n%s", h.logs.String())
	}
}

// An error text of megabytes is cut, saying how much was.
func TestUpstreamTextIsCut(t *testing.T) {
	long := strings.Repeat("é", 3<<19) // 3 MiB, two bytes a character; twice in the answer
	h := hostileClient(t, config.APIConsensus, "header", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(400)
		fmt.Fprintf(w, `{"code":"INVALID_PARAMETER","param":%q,"message":%q}`, long, long)
	})
	_, err := h.c.Get(context.Background(), "/consensus", nil, true)
	e := AsError(err)
	for what, s := range map[string]string{"message": e.Message, "details": e.Details} {
		if len(s) > MaxText+64 || !strings.HasSuffix(s, " more bytes cut)") || !strings.Contains(s[:20], strings.Repeat("é", 5)) {
			t.Errorf("%s of %d bytes: %.80q…%q", what, len(s), s, s[max(0, len(s)-40):])
		}
	}
	if got := Cut(long); !strings.HasSuffix(got, "… (3145216 more bytes cut)") {
		t.Errorf("Cut: …%q", got[len(got)-40:])
	}
}

// A provider's message and code that carry characters that act on the
// text around them (U+202E turns the words after it around, ESC starts a
// terminal's escape, BEL rings) reach the error, and so the log and the
// page, written as \u{…}.
func TestUpstreamTextIsInert(t *testing.T) {
	h := hostileClient(t, config.APIConsensus, "header", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(400)
		fmt.Fprint(w, `{"code":"INVALID_PARAMETER","param":"as\u202eset","message":"bad \u001b[31mred\u0007 \u202edays"}`)
	})
	_, err := h.c.Get(context.Background(), "/consensus", nil, true)
	e := AsError(err)
	if e == nil {
		t.Fatalf("err = %v, want an upstream error", err)
	}
	for what, s := range map[string]string{"message": e.Message, "details": e.Details, "error": e.Error(), "log": h.logs.String()} {
		if strings.ContainsAny(s, "\u202e\x1b\a") {
			t.Errorf("%s carries a raw control or bidirectional character: %q", what, s)
		}
	}
	if want := `bad \u{1B}[31mred\u{7} \u{202E}days`; e.Message != want {
		t.Errorf("message = %q, want %q", e.Message, want)
	}
	if !strings.Contains(e.Details, `param=as\u{202E}set`) {
		t.Errorf("details = %q, want the param escaped", e.Details)
	}
}

// A status word, a code or an error word that is new at every call is
// counted under one code, whatever the API: the series of the exporter's
// own families stay a closed set; the word stays in the error, for the log.
func TestNewWordAtEveryCallAddsNoSeries(t *testing.T) {
	for _, tc := range []struct {
		name, api string
		status    int // 0: a new non-standard status at every call
		body      func(word string) string
		shown     bool // the word is in the error text
	}{
		{"data status word", config.APIData, 400, func(w string) string { return `{"status":{"code":400,"message":"` + w + `"}}` }, true},
		{"data status code", config.APIData, 200, func(w string) string { return `{"status":{"code":` + fmt.Sprint(1000+37*len(w)) + `,"message":"x"}}` }, false},
		{"indicator word", config.APIIndicator, 0, func(w string) string { return `{"error":"` + w + `","message":"no"}` }, true},
		{"consensus code", config.APIConsensus, 0, func(w string) string { return `{"code":"` + strings.ToUpper(w) + `","message":"no"}` }, true},
	} {
		var calls atomic.Int64
		var word atomic.Value
		h := hostileClient(t, tc.api, "header", func(w http.ResponseWriter, _ *http.Request) {
			n := calls.Add(1)
			wd := "w" + strings.Repeat("x", int(n%7)) + strings.Map(func(r rune) rune { return 'a' + (r-'0')%26 }, fmt.Sprint(n*7919))
			word.Store(wd)
			status := tc.status
			if status == 0 {
				status = 560 + int(n%40) // no standard status
			}
			w.WriteHeader(status)
			fmt.Fprint(w, tc.body(wd))
		})
		var last error
		for range 200 {
			_, last = h.c.Get(context.Background(), "/x", nil, true)
		}
		known := len(knownErrorCodes) // present at 0 from the start
		if tc.api == config.APIConsensus {
			known += len(consensusErrorCodes)
		}
		errs := testutil.CollectAndCount(h.c.m.apiErrors) - known
		reqs := testutil.CollectAndCount(h.c.m.requests)
		if errs != 1 || reqs != 1 {
			t.Errorf("%s: 200 calls with a new word each: %d api_errors_total series, %d upstream_requests_total series:\n%s",
				tc.name, errs, reqs, h.exposition(t))
		}
		e := AsError(last)
		if !Codes[e.Code] || (tc.shown && !strings.Contains(strings.ToLower(e.Error()), word.Load().(string))) {
			t.Errorf("%s: last error %q (code %q), word %s", tc.name, e, e.Code, word.Load())
		}
	}
}

// Rate-limit and quota headers out of range are not exported, and each is
// said once in the log; Retry-After too.
func TestGarbageHeadersIgnored(t *testing.T) {
	garbage := map[string][]string{
		"X-RateLimit-Limit":     {"NaN", "-1", "1e26", "many"},
		"X-RateLimit-Remaining": {"-Inf", "-5", "1e26", "NaN"},
		"X-RateLimit-Reset":     {"+Inf", "30", "99999999999999", "soon"},
		"X-Daily-Limit":         {"+Inf", "-1", "1e26", "1,000"},
		"X-Daily-Used":          {"1e26", "NaN", "-3", "0x"},
		"Retry-After":           {"1e26", "-1", "NaN", "100000000000000000000000000"},
	}
	var calls atomic.Int64
	h := hostileClient(t, config.APIConsensus, "header", func(w http.ResponseWriter, _ *http.Request) {
		n := int(calls.Add(1)-1) % 4
		for k, vs := range garbage {
			w.Header().Set(k, vs[n])
		}
		fmt.Fprint(w, `{"data":[]}`)
	})
	for range 8 {
		if _, err := h.c.Get(context.Background(), "/consensus", nil, true); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []prometheus.Collector{h.c.m.rateLimit, h.c.m.rateRemaining, h.c.m.rateReset, h.c.m.dailyLimit, h.c.m.dailyUsed} {
		if n := testutil.CollectAndCount(c); n != 0 {
			t.Errorf("a garbage header was exported:\n%s", h.exposition(t))
			break
		}
	}
	for header := range garbage {
		if n := h.logs.Count("upstream header ignored", "header="+header); n != 1 {
			t.Errorf("%s: said %d times, want once:\n%s", header, n, h.logs.String())
		}
	}

	// Sane values are exported.
	now := time.Now()
	good := map[string]string{"X-RateLimit-Limit": "60", "X-RateLimit-Remaining": "59", "X-Daily-Limit": "100", "X-Daily-Used": "3",
		"X-RateLimit-Reset": fmt.Sprint(now.Add(time.Minute).Unix()), "Retry-After": "Fri, 20 Nov 2026 12:00:30 GMT"}
	h = hostileClient(t, config.APIConsensus, "header", func(w http.ResponseWriter, _ *http.Request) {
		for k, v := range good {
			w.Header().Set(k, v)
		}
		fmt.Fprint(w, `{"data":[]}`)
	})
	if _, err := h.c.Get(context.Background(), "/consensus", nil, true); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ToFloat64(h.c.m.dailyUsed.WithLabelValues(config.APIConsensus)); got != 3 {
		t.Errorf("daily_quota_used = %v", got)
	}
	if got := testutil.ToFloat64(h.c.m.rateReset.WithLabelValues(config.APIConsensus)); got != float64(now.Add(time.Minute).Unix()) {
		t.Errorf("reset = %v", got)
	}
	if h.logs.Count("upstream header ignored") != 0 {
		t.Errorf("a sane header was said ignored:\n%s", h.logs.String())
	}
}

// TestKnownErrorCodesStartAtZero: the codes the bundled rules read exist
// from the client's start, at 0, so that increase() sees the first error.
func TestKnownErrorCodesStartAtZero(t *testing.T) {
	m := NewMetrics(prometheus.NewRegistry())
	New(&config.API{Name: config.APIConsensus, Concurrency: 1, Timeout: time.Second}, m, time.Now, log.NewNopLogger())
	for _, code := range append(append([]string{}, knownErrorCodes...), consensusErrorCodes...) {
		if got := testutil.ToFloat64(m.apiErrors.WithLabelValues(config.APIConsensus, code)); got != 0 {
			t.Errorf("api_errors_total{code=%q} = %v at start, want 0", code, got)
		}
	}
	if n := testutil.CollectAndCount(m.apiErrors); n != len(knownErrorCodes)+len(consensusErrorCodes) {
		t.Errorf("%d api_errors_total series at start, want the %d known codes", n, len(knownErrorCodes)+len(consensusErrorCodes))
	}
}
