package testtool

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/testtool/simclock"
)

// The harness that runs an exporter against the fake upstream. It does not
// import package collector, so that collector's own tests can use it: a
// test builds its exporter (collector.New) on the Config it returns and
// scrapes it through Scrape or Serve, which take any Target.

// DataSection opens a configuration's data API section, its metrics to
// follow: {{URL}} is the fake's address, T its credential.
const DataSection = "\ndata:\n  url: \"{{URL}}\"\n  token_env: T\n  metrics:\n"

// SupplyConfig is a configuration of the data API that needs no listing
// call: BTC supply by day and block, open interest by hour on two
// exchanges.
const SupplyConfig = DataSection + `    - path: /v1/btc/network-data/supply
      window: [day, block]
    - path: /v1/btc/market-data/open-interest
      window: hour
      exchange: [binance, bybit]
`

// Upstream is a fake upstream serving on 127.0.0.1, on a simulated clock
// (Clock) unless the test keeps its own, stopped when the test ends.
type Upstream struct {
	Clock *simclock.Clock
	Fake  *fakeapi.Server
	Srv   *httptest.Server
}

// StartFake starts the fake upstream fo describes on a new Clock, unless
// fo.Now is set: then the test keeps its own time and Clock is nil.
// fo.DataToken is DataToken unless set. Each wrap, in order, stands
// between the test server and the fake (a fault the fake cannot make, a
// count of requests).
func StartFake(t testing.TB, fo fakeapi.Options, wrap ...func(http.Handler) http.Handler) *Upstream {
	t.Helper()
	u := &Upstream{}
	if fo.Now == nil {
		u.Clock = Clock()
		fo.Now = u.Clock.Now
	}
	if fo.DataToken == "" {
		fo.DataToken = DataToken
	}
	u.Fake = fakeapi.New(fo)
	var h http.Handler = u.Fake
	for _, w := range wrap {
		h = w(h)
	}
	u.Srv = httptest.NewServer(h)
	t.Cleanup(u.Srv.Close)
	return u
}

// Config loads yml as the file test.yml, {{URL}} standing for url and
// every token_env holding DataToken, unexpanded. It fails the test when
// the configuration does not load.
func Config(t testing.TB, url, yml string) *config.Config {
	t.Helper()
	return ConfigToken(t, url, yml, DataToken)
}

// ConfigToken is Config with every token_env holding token.
func ConfigToken(t testing.TB, url, yml, token string) *config.Config {
	t.Helper()
	cfg, err := config.Parse("test.yml", []byte(strings.ReplaceAll(yml, "{{URL}}", url)), func(string) string { return token })
	if err != nil {
		t.Fatalf("test.yml: %v", err)
	}
	return cfg
}

// Config loads yml against u (Config with u's address).
func (u *Upstream) Config(t testing.TB, yml string) *config.Config {
	t.Helper()
	return Config(t, u.Srv.URL, yml)
}

// ConfigToken loads yml against u with every token_env holding token.
func (u *Upstream) ConfigToken(t testing.TB, yml, token string) *config.Config {
	t.Helper()
	return ConfigToken(t, u.Srv.URL, yml, token)
}

// FetchJSON asks url directly, with DataToken as a bearer token, and
// decodes the JSON answer into v: a reference for a test that does not
// go through the exporter's client or decoders. It fails the test when
// the call fails or the answer does not decode.
func FetchJSON(t testing.TB, url string, v any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+DataToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: HTTP %d: %v", req.URL.Path, resp.StatusCode, err)
	}
}

// Target is what a test scrapes: a collector.Exporter, whose Settle waits
// until its engines have done what is due at the clock's time.
type Target interface {
	http.Handler
	Settle()
}

// Scrape settles exp and serves it one /metrics request; see Serve.
func Scrape(t testing.TB, exp Target, timeout string) string {
	t.Helper()
	exp.Settle()
	return Serve(t, exp, timeout)
}

// Serve serves h one GET /metrics at once, with timeout (unless "") as
// X-Prometheus-Scrape-Timeout-Seconds, and returns the body. It fails the
// test unless the answer is 200.
func Serve(t testing.TB, h http.Handler, timeout string) string {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	if timeout != "" {
		req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", timeout)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("scrape: HTTP %d: %s", rec.Code, rec.Body.String())
	}
	return rec.Body.String()
}

// Until polls cond every 10 ms, in real time, for up to limit, and fails
// the test with what when cond does not hold by then: a wait for
// goroutines the simulated clock does not drive.
func Until(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(limit); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", limit, what)
		}
	}
}

// AliasedLists is the 300-byte configuration of issue 17: one entry whose
// nine parameters alias one list of 30 values, 30⁹ combinations.
func AliasedLists(url, tokenFile string) string {
	values := make([]string, 30)
	for i := range values {
		values[i] = fmt.Sprintf("v%d", i)
	}
	yml := fmt.Sprintf("data:\n  url: %q\n  token_file: %q\n  metrics:\n  - path: /v1/btc/x/y\n    p0: &l [%s]\n",
		url, tokenFile, strings.Join(values, ","))
	for i := 1; i < 9; i++ {
		yml += fmt.Sprintf("    p%d: *l\n", i)
	}
	return yml
}
