package collector

import (
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/testtool"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// faultConfig has one tuple per API, refreshed every minute when healthy,
// a short upstream timeout and a small max_staleness, so that the life of a
// series under a fault plays out in a few minutes of the test clock.
const faultConfig = `
data:
  url: "{{URL}}"
  token_env: T
  auth: header # data
  timeout: 1s
  max_staleness: 10m
  metrics:
    - path: /v1/btc/network-data/supply
      window: day
      cache_ttl: 1m
indicator:
  url: "{{URL}}/indicator"
  token_env: T
  timeout: 1s
  max_staleness: 10m
  metrics:
    - path: /api/equities/{equity}/pbr-band
      equity: "KRX:005930"
      cache_ttl: 1m
      rows: data
      time_key: date
      fields:
        close: {name: fault_equity_close}
consensus:
  url: "{{URL}}/consensus"
  token_env: T
  auth: header # consensus
  timeout: 1s
  max_staleness: 10m
  metrics:
    - path: /consensus
      asset: btc
      cache_ttl: 1m
      rows: data
      time_key: date
      fields:
        score: {name: fault_consensus_score}
`

// faultFamily is the data family of each API's tuple in faultConfig.
var faultFamily = map[string]string{
	config.APIData:      "onchain_supply{",
	config.APIIndicator: "onchain_fault_equity_close{",
	config.APIConsensus: "onchain_fault_consensus_score{",
}

// faultCase is one fault and what the exporter must say about it: the
// api_errors_total code and the upstream_requests_total code.
type faultCase struct {
	fault     fakeapi.Fault
	errCode   string
	httpCode  string
	retriedOK bool // the transport may send it twice (a retryable failure)
}

// faultCases lists, per API, every fault kind the fake upstream has.
func faultCases(api string) map[string]faultCase {
	word := func(data, indicator, consensus string) string {
		switch api {
		case config.APIIndicator:
			return indicator
		case config.APIConsensus:
			return consensus
		}
		return data
	}
	mismatch := "decode" // an error object where rows belong
	if api == config.APIData {
		mismatch = "internal_server_error"
	}
	return map[string]faultCase{
		"Slow":             {fault: fakeapi.Fault{Kind: fakeapi.Slow, Delay: 20 * time.Second}, errCode: "timeout", httpCode: "error", retriedOK: true},
		"SlowBody":         {fault: fakeapi.Fault{Kind: fakeapi.SlowBody, Delay: 20 * time.Second}, errCode: "timeout", httpCode: "200"},
		"ConnReset":        {fault: fakeapi.Fault{Kind: fakeapi.ConnReset}, errCode: "transport", httpCode: "error", retriedOK: true},
		"Status500":        {fault: fakeapi.Fault{Kind: fakeapi.Status500}, errCode: word("internal_server_error", "internal_error", "INTERNAL_ERROR"), httpCode: "500", retriedOK: true},
		"Status503":        {fault: fakeapi.Fault{Kind: fakeapi.Status503}, errCode: word("service_unavailable", "service_unavailable", "SERVICE_UNAVAILABLE"), httpCode: "503", retriedOK: true},
		"TooManyRequests":  {fault: fakeapi.Fault{Kind: fakeapi.TooManyRequests, RetryAfter: 90}, errCode: word("too_many_requests", "too_many_requests", "RATE_LIMIT_EXCEEDED"), httpCode: "429"},
		"InvalidJSON":      {fault: fakeapi.Fault{Kind: fakeapi.InvalidJSON}, errCode: "decode", httpCode: "200"},
		"TruncatedJSON":    {fault: fakeapi.Fault{Kind: fakeapi.TruncatedJSON}, errCode: "decode", httpCode: "200"},
		"EmptyData":        {fault: fakeapi.Fault{Kind: fakeapi.EmptyData}, errCode: "no_data", httpCode: "200"},
		"StatusMismatch":   {fault: fakeapi.Fault{Kind: fakeapi.StatusMismatch}, errCode: mismatch, httpCode: "200"},
		"NumbersAsStrings": {fault: fakeapi.Fault{Kind: fakeapi.NumbersAsStrings}, errCode: "bad_value", httpCode: "200"},
		"NonFinite":        {fault: fakeapi.Fault{Kind: fakeapi.NonFinite}, errCode: "bad_value", httpCode: "200"},
		"HugeBody":         {fault: fakeapi.Fault{Kind: fakeapi.HugeBody}, errCode: "decode", httpCode: "200"},
		"Unauthorized":     {fault: fakeapi.Fault{Kind: fakeapi.Unauthorized}, errCode: word("unauthorized", "unauthorized", "INVALID_API_KEY"), httpCode: "401"},
		"Redirect":         {fault: fakeapi.Fault{Kind: fakeapi.Redirect, Location: "http://127.0.0.1:1/elsewhere"}, errCode: "transport", httpCode: "302"},
	}
}

// TestUpstreamFaults plays every fault kind against every API: the scrape
// answers in time, the series keeps its last good value until max_staleness
// and then disappears, query_success and the error counters say what went
// wrong, the other APIs are untouched, and a healthy answer restores it.
func TestUpstreamFaults(t *testing.T) {
	for _, api := range config.APINames {
		cases := faultCases(api)
		names := make([]string, 0, len(cases))
		for n := range cases {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, name := range names {
			tc := cases[name]
			t.Run(api+"/"+name, func(t *testing.T) {
				t.Parallel()
				testFault(t, api, tc)
			})
		}
	}
}

func testFault(t *testing.T, api string, tc faultCase) {
	// The upstream timeout is what the timeout cases test; the others
	// must not meet it by accident: reading a 64 MiB answer up to its
	// 8 MiB cap, under the race detector beside 47 parallel cases on 2
	// cores, took past a second and was counted as a timeout, not as the
	// answer too large that it is. The timeout cases' own healthy calls
	// (the first fill, the recovery) took past a second there too: theirs
	// is a few times that, and still far short of the faults' 20 s.
	timeout := "30s"
	if tc.errCode == "timeout" {
		timeout = "3s"
	}
	cfg := strings.ReplaceAll(faultConfig, "timeout: 1s", "timeout: "+timeout)
	e := newEnv(t, cfg, fakeapi.Options{})
	family := faultFamily[api]
	success := `onchain_exporter_query_success{api="` + api + `",`
	body := e.scrape("3")
	good := lines(body, family)
	if len(good) == 0 || valueOf(body, success) != "1" {
		t.Fatalf("healthy scrape lacks %s or query_success:\n%s", family, strings.Join(lines(body, "onchain_"), "\n"))
	}
	others := map[string][]string{}
	for _, a := range config.APINames {
		if a != api {
			others[a] = lines(body, faultFamily[a])
		}
	}

	before := requests(body, api, tc.httpCode)
	e.fake.SetFault(api, tc.fault)
	e.clock.Add(2 * time.Minute) // past cache_ttl: the tuple is due
	during := e.timedScrape("3")
	waitIdle(t, e.exp)
	body = e.timedScrape("3") // the failed refresh is now on record
	for _, b := range []string{during, body} {
		if got := lines(b, family); strings.Join(got, "\n") != strings.Join(good, "\n") {
			t.Errorf("within max_staleness the last good value must stay:\n got %v\nwant %v", got, good)
		}
	}
	if got := valueOf(body, success); got != "0" {
		t.Errorf("query_success = %q, want 0", got)
	}
	if n := counter(body, `onchain_exporter_api_errors_total{api="`+api+`",code="`+tc.errCode+`"}`); n < 1 {
		t.Errorf("api_errors_total{code=%q} = %v; errors counted:\n%s", tc.errCode, n,
			strings.Join(lines(body, `onchain_exporter_api_errors_total{api="`+api+`"`), "\n"))
	}
	requests := requests(body, api, tc.httpCode) - before
	if max := 1.0; tc.retriedOK {
		max = 2
		if requests < 1 || requests > max {
			t.Errorf("upstream_requests_total{code=%q} = %v, want 1 or 2", tc.httpCode, requests)
		}
	} else if requests != max {
		t.Errorf("upstream_requests_total{code=%q} = %v, want %v (not retried); requests:\n%s", tc.httpCode, requests, max,
			strings.Join(lines(body, `onchain_exporter_upstream_requests_total{api="`+api+`"`), "\n"))
	}
	for a, want := range others {
		if got := lines(body, faultFamily[a]); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("a fault of %s changed %s: %v, want %v", api, a, got, want)
		}
	}

	e.clock.Add(11 * time.Minute) // past max_staleness since the first failure
	during = e.timedScrape("3")
	waitIdle(t, e.exp)
	body = e.timedScrape("3")
	for _, b := range []string{during, body} {
		if got := lines(b, family); len(got) != 0 {
			t.Errorf("past max_staleness the series must disappear, got %v", got)
		}
	}
	if got := valueOf(body, success); got != "0" {
		t.Errorf("query_success = %q past max_staleness, want 0", got)
	}
	for a := range others {
		if len(lines(body, faultFamily[a])) == 0 {
			t.Errorf("a fault of %s made %s disappear", api, a)
		}
	}

	e.fake.ClearFaults()
	e.clock.Add(31 * time.Minute) // past every back-off and pause
	body = e.timedScrape("3")
	if got := lines(body, family); strings.Join(got, "\n") != strings.Join(good, "\n") {
		t.Errorf("a healthy answer must restore the series:\n got %v\nwant %v", got, good)
	}
	if got := valueOf(body, success); got != "1" {
		t.Errorf("query_success = %q after recovery, want 1", got)
	}
}

// timedScrape scrapes with the given X-Prometheus-Scrape-Timeout-Seconds
// and fails the test when the answer takes longer than that timeout plus a
// generous margin.
func (e *env) timedScrape(timeout string) string {
	e.t.Helper()
	secs, err := strconv.ParseFloat(timeout, 64)
	if err != nil {
		e.t.Fatal(err)
	}
	start := time.Now()
	body := e.scrape(timeout)
	// The margin is wide (a loaded machine is slow), yet short of the
	// faults' own delays a scrape that waited for them would take.
	if took, limit := time.Since(start), time.Duration(secs*float64(time.Second))+5*time.Second; took > limit {
		e.t.Errorf("scrape with a %ss timeout took %v", timeout, took)
	}
	return body
}

// waitIdle waits until no refresh of exp is under way.
func waitIdle(t *testing.T, exp *Exporter) {
	t.Helper()
	exp.Settle()
}

// counter returns the value of the one series line starting with prefix,
// or 0 when there is none.
func counter(body, prefix string) float64 {
	v := valueOf(body, prefix)
	if v == "" {
		return 0
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return -1
	}
	return f
}

// setBase wraps the innermost transport of an API's upstream, under
// retries and instrumentation, so that a test can watch the wire.
func setBase(t *testing.T, exp *Exporter, api string, wrap func(http.RoundTripper) http.RoundTripper) {
	t.Helper()
	for _, c := range engines(exp) {
		if c.name != api {
			continue
		}
		c.mu.Lock()
		up := c.up
		c.mu.Unlock()
		up.WrapTransport(wrap)
		return
	}
	t.Fatalf("no collector for %s", api)
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestHugeBodyIsCapped: of a 64 MiB answer the exporter reads at most
// 8 MiB (and one byte to know it is more), then gives up on it. The
// timeout is long here: reading 8 MiB under -race on a loaded machine
// can take longer than faultConfig's 1 s, and a timeout is another error.
func TestHugeBodyIsCapped(t *testing.T) {
	cfg := strings.ReplaceAll(faultConfig, "timeout: 1s", "timeout: 60s")
	for _, api := range config.APINames {
		t.Run(api, func(t *testing.T) {
			e := newEnv(t, cfg, fakeapi.Options{})
			var read atomic.Int64
			setBase(t, e.exp, api, func(next http.RoundTripper) http.RoundTripper {
				return roundTripFunc(func(r *http.Request) (*http.Response, error) {
					resp, err := next.RoundTrip(r)
					if resp != nil {
						resp.Body = countingBody{resp.Body, &read}
					}
					return resp, err
				})
			})
			e.fake.SetFault(api, fakeapi.Fault{Kind: fakeapi.HugeBody})
			e.scrape("5")
			waitIdle(t, e.exp)
			if n := read.Load(); n > upstream.MaxBody+1 || n < upstream.MaxBody {
				t.Errorf("read %d bytes of a 64 MiB answer, want %d", n, upstream.MaxBody+1)
			}
			body := e.scrape("5")
			if got := counter(body, `onchain_exporter_api_errors_total{api="`+api+`",code="decode"}`); got != 1 {
				t.Errorf("api_errors_total{code=decode} = %v", got)
			}
		})
	}
}

// TestFamilyConflictSaysWhy: when every value of an answer is refused a
// series (here, a family another tuple already owns), the refresh fails
// with the reason, not with "no value".
func TestFamilyConflictSaysWhy(t *testing.T) {
	up := testtool.StartFake(t, fakeapi.Options{})
	c := up.Clock
	cfg := up.Config(t, `
data:
  url: "{{URL}}"
  token_env: T
  metrics:
    - path: /v1/btc/exchange-flows/netflow
      exchange: binance
      fields: {netflow_total: {name: flow}}
    - path: /v1/btc/exchange-flows/inflow
      exchange: binance
      fields: {inflow_total: {name: flow}}
`)
	var logs testtool.LogBuffer
	exp, err := New(cfg, log.NewLogfmtLogger(&logs), prometheus.NewRegistry(), Options{Clock: c, IdleAfter: neverIdle})
	if err != nil {
		t.Fatal(err)
	}
	defer exp.Close()
	e := &env{t: t, exp: exp}
	body := e.scrape("5")
	if len(lines(body, "onchain_flow{")) != 1 {
		t.Errorf("one of the two tuples must own onchain_flow:\n%s", strings.Join(lines(body, "onchain_"), "\n"))
	}
	if got := counter(body, `onchain_exporter_api_errors_total{api="data",code="family_conflict"}`); got != 1 {
		t.Errorf("api_errors_total{code=family_conflict} = %v", got)
	}
	if !strings.Contains(logs.String(), "is already produced by") || !strings.Contains(logs.String(), "fields.") {
		t.Errorf("the log does not say why the tuple has no values:\n%s", logs.String())
	}
}

// requests sums upstream_requests_total of an API and code over its
// endpoints.
func requests(body, api, code string) float64 {
	sum := 0.0
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, "onchain_exporter_upstream_requests_total{") && strings.Contains(l, `api="`+api+`"`) && strings.Contains(l, `code="`+code+`"`) {
			f, err := strconv.ParseFloat(l[strings.LastIndexByte(l, ' ')+1:], 64)
			if err != nil {
				return -1
			}
			sum += f
		}
	}
	return sum
}
