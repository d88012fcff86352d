package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/onchain-exporter/onchain_exporter/config"
)

// The landing page links every API's metrics with its tuple count and
// shows the configuration file and any status, escaped; the credential of
// the configuration never shows.
func TestLandingPage(t *testing.T) {
	const secret = "landing-secret-7f3a"
	const file = `conf/<b>on"chain</b>.yml`
	cfg, err := config.Parse(file, []byte(`
data:
  url: http://127.0.0.1:1
  token_env: ONCHAIN_TEST_LANDING_TOKEN
  metrics:
    - path: /v1/btc/network-data/supply
      window: [day, hour]
consensus:
  url: http://127.0.0.1:2
  token_env: ONCHAIN_TEST_LANDING_TOKEN
  metrics:
    - path: /consensus
      asset: bitcoin
`), func(name string) string {
		if name == "ONCHAIN_TEST_LANDING_TOKEN" {
			return secret
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.APIs[config.APIData].Token() != secret {
		t.Fatal("the test's credential was not read")
	}
	info := infoOf("/metrics", false, cfg, nil)
	info.APIs[2].Status = "expanded <1 asset>"
	var landing landingPage
	landing.Store(info)
	rec := httptest.NewRecorder()
	landing.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	b, _ := io.ReadAll(rec.Body)
	body := string(b)
	for _, want := range []string{
		`<a href="/metrics">Metrics</a>: every configured API`,
		`<a href="/metrics?collect[]=data">Metrics of the data API only</a>: 2 tuples<`,
		`<a href="/metrics?collect[]=indicator">Metrics of the Indicator API only</a>: not configured<`,
		`<a href="/metrics?collect[]=consensus">Metrics of the Analyst Consensus API only</a>: 1 tuple, expanded &lt;1 asset&gt;<`,
		`Configuration file: <code>conf/&lt;b&gt;on&#34;chain&lt;/b&gt;.yml</code>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the landing page lacks %s:\n%s", want, body)
		}
	}
	if strings.Contains(body, secret) || strings.Contains(body, "<b>") {
		t.Errorf("the landing page shows the credential or unescaped text:\n%s", body)
	}
}

// TestLandingPageSaysHowTheBudgetCut: a configuration that costs more than
// its daily_budget shows, on the landing page, what the plan cut.
func TestLandingPageSaysHowTheBudgetCut(t *testing.T) {
	cfg, err := config.Parse("b.yml", []byte(`
data:
  url: http://127.0.0.1:1
  token_env: T
  daily_budget: 100
  metrics:
    - path: /v1/btc/market-data/open-interest
      window: min
      exchange: [binance, okx]
    - path: /v1/btc/network-data/supply
`), func(string) string { return "x" })
	if err != nil {
		t.Fatal(err)
	}
	h, err := newLandingPage(infoOf("/metrics", false, cfg, nil))
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	if body := rec.Body.String(); !strings.Contains(body, "daily_budget:") || !strings.Contains(body, "min polled every") {
		t.Errorf("the landing page does not say how daily_budget cut the plan:\n%s", body)
	}
}

// Issue 27: at run time a likely typo showed in one log line only. The
// landing page lists the findings of the configuration in force, escaped.
func TestLandingPageShowsFindings(t *testing.T) {
	cfg, err := config.Parse("f<i>.yml", []byte(`
data:
  url: http://127.0.0.1:1
  token_env: T
  metrics:
    - path: /v1/btc/exchange-flows/reserve
      exchanges: binance
`), func(string) string { return "x" })
	if err != nil {
		t.Fatal(err)
	}
	var landing landingPage
	landing.Store(infoOf("/metrics", false, cfg, nil))
	rec := httptest.NewRecorder()
	landing.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	want := `<li><code>f&lt;i&gt;.yml:7: data.metrics[0].exchanges: no endpoint of the built-in catalog takes a parameter exchanges; did you mean &#34;exchange&#34;? (it is sent, and labels the series, as written)</code></li>`
	if body := rec.Body.String(); !strings.Contains(body, want) {
		t.Errorf("the landing page lacks the finding %s:\n%s", want, body)
	}
}
